package main

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

const examplePath = "../../configs/sqlfork.example.yaml"

// TestExampleConfig keeps configs/sqlfork.example.yaml honest: it loads through
// the real resolution, has no unknown keys, yields a valid config equal to the
// defaults, and documents every setting.
func TestExampleConfig(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}

	s, err := resolveFor(t, []string{"--config", examplePath}, nil, map[string]string{examplePath: string(data)})
	if err != nil {
		t.Fatalf("example does not load: %v", err)
	}
	if err := s.Proxy.Validate(); err != nil {
		t.Fatalf("example is not valid: %v", err)
	}
	s.Proxy.Users = nil // the example has users: []
	if def := defaultSettings(); !reflect.DeepEqual(s, def) {
		t.Errorf("example values are not the defaults:\n got %+v\nwant %+v", s, def)
	}

	// Every setting (and users) is a key with its own comment.
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	comments := map[string]string{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		comments[root.Content[i].Value] = root.Content[i].HeadComment
	}
	want := []string{usersKey}
	fset := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addFlags(fset)
	fset.VisitAll(func(f *pflag.Flag) {
		if f.Name != configFlag {
			want = append(want, fileKey(f.Name))
		}
	})
	if len(want) != len(settingTable())+1 {
		t.Fatalf("flags and settings disagree: %v", want)
	}
	for _, key := range want {
		c, ok := comments[key]
		switch {
		case !ok:
			t.Errorf("example has no key %s", key)
		case strings.TrimSpace(c) == "":
			t.Errorf("example key %s has no comment line", key)
		}
	}
}

// TestExampleUsers uncomments the example users block of the example file and
// checks it loads as documented.
func TestExampleUsers(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inBlock, found := false, false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "# users:":
			inBlock, found = true, true
			out = append(out, "users:")
		case inBlock && strings.HasPrefix(line, "#   "):
			out = append(out, strings.TrimPrefix(line, "# "))
		case line == "users: []":
			inBlock = false // replaced by the uncommented block
		default:
			inBlock = false
			out = append(out, line)
		}
	}
	if !found {
		t.Fatal(`example has no commented "# users:" block`)
	}
	text := strings.Join(out, "\n")
	s, err := resolveFor(t, []string{"--config", "x.yaml"}, nil, map[string]string{"x.yaml": text})
	if err != nil {
		t.Fatalf("uncommented example users do not load: %v\n%s", err, text)
	}
	want := []proxy.User{{Name: "app", Password: "app-secret", AuthPlugin: proxy.AuthCachingSha2Password,
		UpstreamUser: "app_rw", UpstreamPassword: "upstream-secret"},
		{Name: "agent", Password: "agent-secret", DenyStatements: ptr("ddl,routine"), StatementTimeout: ptr(5 * time.Second),
			MaxRows: ptr[int64](10000), MaxSandboxes: ptr(4)}}
	if !reflect.DeepEqual(s.Proxy.Users, want) {
		t.Errorf("users = %+v, want %+v", s.Proxy.Users, want)
	}
}
