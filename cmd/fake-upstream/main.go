// Command fake-upstream serves the fake internal services of package
// upstream/fake as a separate process, for running dealer-edge against
// "remote" upstreams in demos and load tests:
//
//	go run ./cmd/fake-upstream --listen 127.0.0.1:9090 --latency 5ms --fail-rate 0.0 [--seed N] [--fleet-dealers N]
//
// It prints the bound address (useful with port 0) and the demo keys, and
// exits cleanly on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fake-upstream:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fake-upstream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:9090", "address to listen on (port 0 picks a free port)")
	latency := fs.Duration("latency", 0, "latency added to every answer of every service")
	failRate := fs.Float64("fail-rate", 0, "probability (0..1) that a request is answered with 500")
	seed := fs.Int64("seed", 0, fmt.Sprintf("data seed (0 = %d)", fake.DefaultSeed))
	extraKeys := fs.Int("extra-keys", 0, "extra active API keys load-key-0000000 ... for key index load tests")
	fleet := fs.Int("fleet-dealers", 0, fmt.Sprintf("extra dealers 1001 ... with Alpha Motori's inventory sizes and keys fleet-key-0000 ..., for benchmarks of a fleet's working set (at most %d)", fake.MaxFleetDealers))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *latency < 0 {
		return fmt.Errorf("--latency must not be negative, got %v", *latency)
	}
	if !(*failRate >= 0 && *failRate <= 1) {
		return fmt.Errorf("--fail-rate must be between 0 and 1, got %v", *failRate)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *extraKeys < 0 || *extraKeys > 10_000_000 {
		return fmt.Errorf("--extra-keys must be between 0 and 10000000, got %d", *extraKeys)
	}
	if *fleet < 0 || *fleet > fake.MaxFleetDealers {
		return fmt.Errorf("--fleet-dealers must be between 0 and %d, got %d", fake.MaxFleetDealers, *fleet)
	}
	srv := fake.NewServer(fake.Options{Seed: *seed, Latency: *latency, FailRate: *failRate, ExtraKeys: *extraKeys, FleetDealers: *fleet})
	addr, err := srv.Start(*listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *listen, err)
	}
	fmt.Fprintf(stdout, "fake-upstream listening on http://%s (latency %v, fail rate %g)\n", addr, *latency, *failRate)
	fmt.Fprintln(stdout, "demo keys:")
	for _, k := range fake.DemoKeys {
		fmt.Fprintf(stdout, "  %-18s %s\n", k.Key, k.Description)
	}
	fmt.Fprintf(stdout, "  %s .. %s load-test keys\n", fake.BenchKey(0), fake.BenchKey(fake.BenchKeys-1))
	if *fleet > 0 {
		fmt.Fprintf(stdout, "  %s .. %s fleet keys, dealers %d .. %d\n", fake.FleetKey(0), fake.FleetKey(*fleet-1), fake.FleetDealerID(0), fake.FleetDealerID(*fleet-1))
	}

	<-ctx.Done()
	stop()
	fmt.Fprintln(stdout, "fake-upstream: shutting down")
	start := time.Now()
	srv.Close()
	fmt.Fprintf(stdout, "fake-upstream: stopped in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}
