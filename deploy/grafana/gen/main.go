// Command gen writes the Grafana dashboard of dealer-edge:
//
//	go run ./grafana/gen -o grafana/dealer-edge.json   (from deploy/)
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dealer-edge/dealer-edge/deploy/grafana/dashboard"
)

func main() {
	out := flag.String("o", "", "output file (standard output when empty)")
	flag.Parse()
	b, err := dashboard.JSON()
	if err == nil {
		if *out == "" {
			_, err = os.Stdout.Write(b)
		} else {
			err = os.WriteFile(*out, b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
