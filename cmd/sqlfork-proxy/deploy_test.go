package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestKubernetesManifest keeps deploy/kubernetes honest: the manifest parses,
// the container's serve arguments and its config file resolve through the
// real settings code into a valid config, and its probes use the paths the
// metrics server serves.
func TestKubernetesManifest(t *testing.T) {
	data, err := os.ReadFile("../../deploy/kubernetes/sqlfork-proxy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	var configFile, probes string
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Args          []string `yaml:"args"`
							LivenessProbe struct {
								HTTPGet struct{ Path string } `yaml:"httpGet"`
							} `yaml:"livenessProbe"`
							ReadinessProbe struct {
								HTTPGet struct{ Path string } `yaml:"httpGet"`
							} `yaml:"readinessProbe"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("manifest does not parse: %v", err)
		}
		switch doc.Kind {
		case "ConfigMap":
			configFile = doc.Data["sqlfork.yaml"]
		case "Deployment":
			c := doc.Spec.Template.Spec.Containers[0]
			args = c.Args
			probes = c.LivenessProbe.HTTPGet.Path + " " + c.ReadinessProbe.HTTPGet.Path
		}
	}
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("container args %q do not run serve", args)
	}
	if probes != "/healthz /readyz" {
		t.Fatalf("probes %q", probes)
	}
	var flags []string
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "--config=") {
			a = "--config=/etc/sqlfork/sqlfork.yaml"
		}
		flags = append(flags, a)
	}
	s, err := resolveFor(t, flags, map[string]string{"SQLFORK_UPSTREAM_PASSWORD": "x"},
		map[string]string{"/etc/sqlfork/sqlfork.yaml": configFile})
	if err != nil {
		t.Fatalf("manifest settings do not resolve: %v", err)
	}
	if err := s.Proxy.Validate(); err != nil {
		t.Fatalf("manifest settings are invalid: %v", err)
	}
}
