// Command floor lists what a live kubegap audit lists, with the same
// requests, and throws it away: the lower bound of bench/run.sh. It prints
// one line per resource (objects, pages, seconds) to stdout.
//
//	floor --kubeconfig FILE [--page-size 500] [--concurrency 4] [--qps 50] [--burst 100]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubegap/kubegap/bench/floor"
	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
)

func main() { os.Exit(run()) }

func run() int {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	var opts floor.Options
	flag.Int64Var(&opts.PageSize, "page-size", 500, "LIST page size")
	flag.IntVar(&opts.Concurrency, "concurrency", 4, "resources listed at once")
	qps := flag.Float64("qps", 50, "client-side QPS limit")
	flag.IntVar(&opts.Burst, "burst", 100, "client-side burst")
	flag.Parse()
	opts.QPS = float32(*qps)

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "floor: reading kubeconfig: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	counts, err := floor.List(ctx, cfg, audit.Resources(checks.All()), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "floor: %v\n", err)
		return 2
	}
	for _, c := range counts {
		fmt.Printf("%-50s %8d objects %5d pages %6.2f s\n", c.Resource, c.Objects, c.Pages, c.Elapsed.Seconds())
	}
	return 0
}
