package session

import (
	"strings"
	"testing"
	"time"
)

func TestCheckTTL(t *testing.T) {
	tests := []struct {
		max, ttl time.Duration
		want     string // "" when allowed
	}{
		{0, 0, ""},
		{0, 1000000 * time.Hour, ""},
		{720 * time.Hour, time.Hour, ""},
		{720 * time.Hour, 720 * time.Hour, ""},
		{720 * time.Hour, 1000000 * time.Hour, "at most 720h0m0s (max-sandbox-ttl), not 1000000h0m0s"},
		{720 * time.Hour, 0, "not no end"},
	}
	for _, tt := range tests {
		err := Limits{MaxTTL: tt.max}.CheckTTL(tt.ttl)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("max %s, ttl %s: refused: %v", tt.max, tt.ttl, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("max %s, ttl %s: got %v, want an error with %q", tt.max, tt.ttl, err, tt.want)
		}
	}
}

func TestConfigValidateTTLs(t *testing.T) {
	for _, tt := range []struct {
		def, max time.Duration
		ok       bool
	}{
		{24 * time.Hour, 720 * time.Hour, true},
		{0, 0, true},
		{24 * time.Hour, 0, true},
		{0, 720 * time.Hour, false},
		{1000 * time.Hour, 720 * time.Hour, false},
	} {
		c := Config{DefaultTTL: tt.def, MaxTTL: tt.max}
		if err := c.Validate(); (err == nil) != tt.ok {
			t.Errorf("sandbox-ttl %s, max-sandbox-ttl %s: Validate() = %v", tt.def, tt.max, err)
		}
	}
}
