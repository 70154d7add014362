package session

import (
	"fmt"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
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
		{720 * time.Hour, 1000000 * time.Hour, "at most 30d (max-sandbox-ttl), not 1000000h"},
		{720 * time.Hour, 0, "not no end"},
	}
	for _, tt := range tests {
		testkit.WantError(t, fmt.Sprintf("max %s, ttl %s", tt.max, tt.ttl), Limits{MaxTTL: tt.max}.CheckTTL(tt.ttl), tt.want)
	}
}
