package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const (
	k8sDir      = "../../deploy/kubernetes"
	k8sManifest = k8sDir + "/sqlfork-proxy.yaml"
	adminPort   = 9104
)

// k8sContainer is what the tests read of a Deployment's container.
type k8sContainer struct {
	Args []string `yaml:"args"`
	Env  []struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			SecretKeyRef struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	LivenessProbe struct {
		HTTPGet struct{ Path string } `yaml:"httpGet"`
	} `yaml:"livenessProbe"`
	ReadinessProbe struct {
		HTTPGet struct{ Path string } `yaml:"httpGet"`
	} `yaml:"readinessProbe"`
}

// k8sDoc is what the tests read of a manifest's documents, of any kind.
type k8sDoc struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Selector    map[string]any `yaml:"selector"`
		PodSelector map[string]any `yaml:"podSelector"`
		Ports       []struct {
			Name string `yaml:"name"`
			Port int    `yaml:"port"`
		} `yaml:"ports"`
		Template struct {
			Spec struct {
				Containers []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
		Ingress []struct {
			Ports []struct {
				Port int `yaml:"port"`
			} `yaml:"ports"`
			From []any `yaml:"from"`
		} `yaml:"ingress"`
		Endpoints []struct {
			Port string `yaml:"port"`
		} `yaml:"endpoints"`
	} `yaml:"spec"`
}

// readManifest decodes every document of a Kubernetes manifest.
func readManifest(t *testing.T, path string) []k8sDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []k8sDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc k8sDoc
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return docs
		} else if err != nil {
			t.Fatalf("%s does not parse: %v", path, err)
		}
		docs = append(docs, doc)
	}
}

// findDoc is the manifest's object of that kind and name, or nil.
func findDoc(docs []k8sDoc, kind, name string) *k8sDoc {
	for i := range docs {
		if docs[i].Kind == kind && docs[i].Metadata.Name == name {
			return &docs[i]
		}
	}
	return nil
}

// proxyContainer is the Deployment's (first) container.
func proxyContainer(t *testing.T, docs []k8sDoc) k8sContainer {
	t.Helper()
	d := findDoc(docs, "Deployment", "sqlfork-proxy")
	if d == nil || len(d.Spec.Template.Spec.Containers) == 0 {
		t.Fatal("the manifest has no sqlfork-proxy Deployment with a container")
	}
	return d.Spec.Template.Spec.Containers[0]
}

// TestKubernetesManifest keeps deploy/kubernetes honest: the manifest parses,
// the container's serve arguments, its config file and its environment (the
// Secrets' values) resolve through the real settings code into a valid
// config with a promote account and an admin token, and its probes use the
// paths the metrics server serves.
func TestKubernetesManifest(t *testing.T) {
	docs := readManifest(t, k8sManifest)
	c := proxyContainer(t, docs)
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("container args %q do not run serve", c.Args)
	}
	if probes := c.LivenessProbe.HTTPGet.Path + " " + c.ReadinessProbe.HTTPGet.Path; probes != "/healthz /readyz" {
		t.Fatalf("probes %q", probes)
	}
	var flags []string
	for _, a := range c.Args[1:] {
		if strings.HasPrefix(a, "--config=") {
			a = "--config=/etc/sqlfork/sqlfork.yaml"
		}
		flags = append(flags, a)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		ref := e.ValueFrom.SecretKeyRef
		secret := findDoc(docs, "Secret", ref.Name)
		if secret == nil {
			t.Fatalf("env %s: the manifest has no Secret %q", e.Name, ref.Name)
		}
		v, ok := secret.StringData[ref.Key]
		if !ok {
			t.Fatalf("env %s: Secret %q has no key %q", e.Name, ref.Name, ref.Key)
		}
		env[e.Name] = v
	}
	var configFile string
	if cm := findDoc(docs, "ConfigMap", "sqlfork-proxy"); cm != nil {
		configFile = cm.Data["sqlfork.yaml"]
	}
	s, err := resolveFor(t, flags, env, map[string]string{"/etc/sqlfork/sqlfork.yaml": configFile})
	if err != nil {
		t.Fatalf("manifest settings do not resolve: %v", err)
	}
	if err := s.Proxy.Validate(); err != nil {
		t.Fatalf("manifest settings are invalid: %v", err)
	}
	if s.Proxy.PromoteUser == "" || s.Proxy.PromotePassword == "" || s.AdminToken == "" {
		t.Errorf("manifest: promote user %q (password set: %v), admin token set: %v",
			s.Proxy.PromoteUser, s.Proxy.PromotePassword != "", s.AdminToken != "")
	}
}

// TestKubernetesAppliesWithoutCRDs: the files directly in deploy/kubernetes
// (what `kubectl apply -f deploy/kubernetes/` applies) hold only built-in
// kinds; the ServiceMonitor, a Prometheus Operator CRD, is in a directory of
// its own and selects the admin Service by its labels and port name.
func TestKubernetesAppliesWithoutCRDs(t *testing.T) {
	builtin := []string{"v1", "apps/v1", "networking.k8s.io/v1", "policy/v1", "autoscaling/v2"}
	files, err := filepath.Glob(k8sDir + "/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", k8sDir, err)
	}
	for _, f := range files {
		for _, d := range readManifest(t, f) {
			if !slices.Contains(builtin, d.APIVersion) {
				t.Errorf("%s: %s %q is %s, not a built-in API: kubectl apply fails without its CRD",
					f, d.Kind, d.Metadata.Name, d.APIVersion)
			}
		}
	}
	admin := findDoc(readManifest(t, k8sManifest), "Service", "sqlfork-proxy-admin")
	if admin == nil {
		t.Fatal("the manifest has no sqlfork-proxy-admin Service")
	}
	sm := findDoc(readManifest(t, k8sDir+"/prometheus-operator/servicemonitor.yaml"), "ServiceMonitor", "sqlfork-proxy")
	if sm == nil {
		t.Fatal("prometheus-operator/servicemonitor.yaml has no ServiceMonitor sqlfork-proxy")
	}
	match, _ := sm.Spec.Selector["matchLabels"].(map[string]any)
	for k, v := range match {
		if admin.Metadata.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v, which the admin Service's labels %v lack", k, v, admin.Metadata.Labels)
		}
	}
	if len(match) == 0 || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" {
		t.Errorf("ServiceMonitor selector %v, endpoints %+v", match, sm.Spec.Endpoints)
	}
	if len(admin.Spec.Ports) != 1 || admin.Spec.Ports[0].Name != "metrics" || admin.Spec.Ports[0].Port != adminPort {
		t.Errorf("the admin Service's ports %+v", admin.Spec.Ports)
	}
}

// TestKubernetesAdminListenerPrivate: the clients' Service does not expose
// the admin listener (the admin API and console), and the NetworkPolicy
// admits to it only the pods it names.
func TestKubernetesAdminListenerPrivate(t *testing.T) {
	docs := readManifest(t, k8sManifest)
	svc := findDoc(docs, "Service", "sqlfork-proxy")
	if svc == nil {
		t.Fatal("the manifest has no sqlfork-proxy Service")
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == adminPort || p.Name == "metrics" {
			t.Errorf("the clients' Service exposes the admin listener: %+v", p)
		}
	}
	np := findDoc(docs, "NetworkPolicy", "sqlfork-proxy")
	if np == nil {
		t.Fatal("the manifest has no sqlfork-proxy NetworkPolicy")
	}
	if want := map[string]any{"matchLabels": map[string]any{"app": "sqlfork-proxy"}}; !reflect.DeepEqual(np.Spec.PodSelector, want) {
		t.Errorf("the NetworkPolicy selects %v", np.Spec.PodSelector)
	}
	admits := 0
	for _, rule := range np.Spec.Ingress {
		all := len(rule.Ports) == 0
		for _, p := range rule.Ports {
			all = all || p.Port == adminPort
		}
		if all && len(rule.From) == 0 {
			t.Errorf("a NetworkPolicy rule admits anyone to the admin port: %+v", rule)
		}
		if all {
			admits++
		}
	}
	if admits == 0 {
		t.Error("no NetworkPolicy rule admits anyone to the admin port (Prometheus)")
	}
}
