// Command kubegap audits Kubernetes clusters, read-only, for the gaps behind
// public incidents, and browses the library of those incidents.
package main

import (
	"os"

	"github.com/kubegap/kubegap/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
