// Command kubegap audits Kubernetes clusters, read-only, for the gaps behind
// public incidents, and browses the library of those incidents.
package main

import (
	"os"

	// The auth-provider plugins kubectl registers (OIDC). Exec credential
	// plugins need no import: client-go runs them itself.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/kubegap/kubegap/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
