package cache_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dealer-edge/dealer-edge/cache"
)

func ExampleCache_Get() {
	c, err := cache.New(cache.Options{}) // L1 only; pass Options.Redis for the shared L2
	if err != nil {
		panic(err)
	}
	defer c.Close()
	pol := cache.Policy{TTL: time.Minute, StaleWhileRevalidate: 10 * time.Second, StaleIfError: time.Hour}
	fill := func(ctx context.Context) ([]byte, error) { return []byte(`{"data":[]}`), nil }
	key := []byte("/v1/news?page=1&per_page=20")
	for i := 0; i < 2; i++ {
		e, res, err := c.Get(context.Background(), 42, key, pol, fill)
		if err != nil {
			panic(err)
		}
		fmt.Println(res, e.ETag != "", e.MaxAge(time.Now()) > 50)
	}
	_ = c.PurgeDealer(context.Background(), 42)
	_, res, _ := c.Get(context.Background(), 42, key, pol, fill)
	fmt.Println(res)
	// Output:
	// MISS true true
	// HIT true true
	// MISS
}
