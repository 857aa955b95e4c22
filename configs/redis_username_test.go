package configs

import (
	"strings"
	"testing"
)

// TestRedisUsernameNeedsPassword: redis.username is an ACL user name, and
// go-redis authenticates (HELLO ... AUTH, or AUTH) only when a password is
// set: with a user name alone it sends no credentials, and the edge ran as
// Redis's "default" user (ACL WHOAMI answered "default" on a
// redis-server with an "edge" user and a password-less default user;
// against a Redis that requires a password, every command failed NOAUTH).
// Before 2026-11-29 Validate accepted it (redis.sentinel_username without
// its password was already refused).
func TestRedisUsernameNeedsPassword(t *testing.T) {
	err := validateField(t, func(c *Config) { c.Redis.Addrs, c.Redis.Username = []string{"10.0.0.1:6379"}, "edge" })
	if err == nil || !strings.Contains(err.Error(), "redis.username:") {
		t.Errorf("redis.username without redis.password: err = %v; want an error naming redis.username", err)
	}
	for name, mutate := range map[string]func(c *Config){
		"user and password": func(c *Config) { c.Redis.Username, c.Redis.Password = "edge", "pw" },
		"password alone":    func(c *Config) { c.Redis.Password = "pw" }, // requirepass
		"neither":           func(c *Config) {},
	} {
		if err := validateField(t, mutate); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
