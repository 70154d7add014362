package adminapi

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestPromoteOptionsQuery: the query a Client sends for options is read
// back by the handler as the same options (strategy and digest in lower
// case, "" as fail).
func TestPromoteOptionsQuery(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0a", 32)
	tests := []struct {
		name  string
		o     PromoteOptions
		query string
		back  PromoteOptions // what ParsePromote reads of query
	}{
		{"none", PromoteOptions{}, "", PromoteOptions{Strategy: "fail"}},
		{"strategy", PromoteOptions{Strategy: "ours"}, "strategy=ours", PromoteOptions{Strategy: "ours"}},
		{"everything but a digest", PromoteOptions{Strategy: "theirs", Tables: []string{"b.t", "a.t"}, Overwrite: []string{"a.t"}, DryRun: true},
			"dry_run=1&overwrite=a.t&strategy=theirs&table=b.t&table=a.t",
			PromoteOptions{Strategy: "theirs", Tables: []string{"b.t", "a.t"}, Overwrite: []string{"a.t"}, DryRun: true}},
		{"digest in upper case", PromoteOptions{Strategy: "OURS", Matching: strings.ToUpper(digest)},
			"matching=SHA256%3A" + strings.ToUpper(strings.Repeat("0a", 32)) + "&strategy=OURS", PromoteOptions{Strategy: "ours", Matching: digest}},
		{"names that need escaping", PromoteOptions{Tables: []string{"a b.c&d=e"}}, "table=a+b.c%26d%3De",
			PromoteOptions{Strategy: "fail", Tables: []string{"a b.c&d=e"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.o.Query()
			if got := q.Encode(); got != tt.query {
				t.Errorf("Query = %q, want %q", got, tt.query)
			}
			back, err := ParsePromote(q)
			if err != nil || !reflect.DeepEqual(back, tt.back) {
				t.Errorf("ParsePromote = %+v, %v; want %+v", back, err, tt.back)
			}
		})
	}
}

// TestIsDigest: sha256: and 64 hexadecimal digits, in any case.
func TestIsDigest(t *testing.T) {
	hex := strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		s    string
		want bool
	}{
		{"sha256:" + hex, true},
		{"SHA256:" + strings.ToUpper(hex), true},
		{"sha256:" + hex[1:], false},
		{"sha256:" + hex + "0", false},
		{"sha256:" + hex[1:] + "g", false},
		{"sha256: " + hex[1:], false},
		{"sha1:" + hex, false},
		{hex, false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsDigest(tt.s); got != tt.want {
			t.Errorf("IsDigest(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
	if _, err := ParsePromote(map[string][]string{"matching": {"sha256:x"}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("ParsePromote of a bad digest: %v, want ErrBadRequest", err)
	}
}
