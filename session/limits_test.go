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
