package configs

import (
	"strings"
	"testing"
)

// TestRedisAddrWithUserinfoRefused: an addrs entry with userinfo
// ("password@host:port") is no host:port go-redis can dial, and Validate
// already treats "@" as a sign of a password when it quotes entries; it
// must refuse the entry (without its value) rather than pass it on to the
// start log and the dialer's errors.
func TestRedisAddrWithUserinfoRefused(t *testing.T) {
	const pass = "s3cret-redis-pass"
	c := Default()
	c.Redis.Addrs = []string{pass + "@10.0.0.5:6379"}
	err := c.Validate()
	if err == nil {
		t.Fatalf("redis.addrs %q accepted", c.Redis.Addrs[0])
	}
	if !strings.Contains(err.Error(), "redis.addrs") || strings.Contains(err.Error(), pass) {
		t.Fatalf("error %q: want redis.addrs named and the password not shown", err)
	}
}
