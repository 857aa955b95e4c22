package configs

import (
	"strings"
	"testing"
)

// TestRedisDBRefusedInClusterMode: redis.db is for a single node and
// Sentinel (configs/README.md). With several redis.addrs (and no
// master_name) the edge runs a Redis Cluster client, which has no database
// number: go-redis drops it, every instance used database 0, and a db the
// operator had set (to keep the edge apart from other tenants of a shared
// Redis, or moving from a single node) was ignored without a word. Before
// 2026-11-29 Validate (and --check-config) accepted it.
func TestRedisDBRefusedInClusterMode(t *testing.T) {
	err := validateField(t, func(c *Config) { c.Redis.Addrs, c.Redis.DB = []string{"10.0.0.1:6379", "10.0.0.2:6379"}, 2 })
	if err == nil || !strings.Contains(err.Error(), "redis.db:") {
		t.Errorf("redis.db 2 with two redis.addrs (Cluster mode): err = %v; want an error naming redis.db", err)
	}
	for name, mutate := range map[string]func(c *Config){
		"single node": func(c *Config) { c.Redis.Addrs, c.Redis.DB = []string{"10.0.0.1:6379"}, 2 },
		"embedded":    func(c *Config) { c.Redis.Addrs, c.Redis.DB = nil, 2 },
		"sentinel": func(c *Config) {
			c.Redis.Addrs, c.Redis.MasterName, c.Redis.DB = []string{"10.0.0.1:26379", "10.0.0.2:26379"}, "main", 2
		},
		"cluster, db 0": func(c *Config) { c.Redis.Addrs = []string{"10.0.0.1:6379", "10.0.0.2:6379"} },
	} {
		if err := validateField(t, mutate); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
