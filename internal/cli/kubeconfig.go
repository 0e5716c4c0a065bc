package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"

	"github.com/kubegap/kubegap/internal/cluster"
)

// silenceKlog keeps client-go's own log lines (klog: "Unexpected error when
// reading response body", throttling notices) off stderr. kubegap reports
// what went wrong itself, as one line or in the report's coverage; a klog
// line beside it would be a second, unformatted account. Without a logger
// klog writes errors to stderr whatever its output is set to, so it gets
// one that drops everything.
func silenceKlog() {
	klog.SetLogger(logr.Discard())
}

// validNamespace refuses an -n that is not a namespace name before any
// source is read: live, it would be a path segment of every request.
func (f *sourceFlags) validNamespace() error {
	if err := cluster.ValidateNamespace(f.namespace()); err != nil {
		return fmt.Errorf("-n/--namespace: %w", err)
	}
	return nil
}

// restConfig loads the kubeconfig as kubectl does and returns the config to
// read with and the context's name. kubectl's loader falls back to
// http://localhost:8080 when no kubeconfig names a cluster; kubegap refuses
// instead, saying what it can audit without one.
func (f *sourceFlags) restConfig() (*rest.Config, string, error) {
	cfg, err := f.kube.ToRESTConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, "", f.noCluster("no kubeconfig found: KUBECONFIG is unset or empty and ~/.kube/config holds none")
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading kubeconfig: %w", err)
	}
	contextName := *f.kube.Context
	raw, rawErr := f.kube.ToRawKubeConfigLoader().RawConfig()
	if contextName == "" && rawErr == nil {
		contextName = raw.CurrentContext
	}
	if rawErr == nil && !f.namesCluster(raw.Contexts[contextName], raw.Clusters) {
		if _, err := rest.InClusterConfig(); err != nil {
			// Not in a pod either: client-go would use its default server.
			why := "the kubeconfig names no cluster"
			switch {
			case len(raw.Clusters) == 0 && len(raw.Contexts) == 0 && len(raw.AuthInfos) == 0:
				why = "no kubeconfig found: KUBECONFIG is unset or empty and ~/.kube/config holds none"
			case contextName != "":
				why = fmt.Sprintf("context %q names no cluster with a server in the kubeconfig", contextName)
			case len(raw.Contexts) > 0:
				why = fmt.Sprintf("the kubeconfig has no current context; its contexts are %s", quotedNames(raw.Contexts))
			}
			return nil, "", f.noCluster(why)
		}
	}
	return cfg, contextName, nil
}

// namesCluster reports whether the flags or the context lead to a cluster
// entry with a server.
func (f *sourceFlags) namesCluster(ctx *clientcmdapi.Context, clusters map[string]*clientcmdapi.Cluster) bool {
	if f.kube.APIServer != nil && *f.kube.APIServer != "" {
		return true
	}
	name := ""
	if ctx != nil {
		name = ctx.Cluster
	}
	if f.kube.ClusterName != nil && *f.kube.ClusterName != "" {
		name = *f.kube.ClusterName
	}
	c, ok := clusters[name]
	return ok && c != nil && c.Server != ""
}

func (f *sourceFlags) noCluster(why string) error {
	instead := "audit files with 'kubegap audit --from FILE' or the demo cluster with 'kubegap audit --demo'"
	switch {
	case f.instead != "":
		instead = f.instead
	case f.offline:
		instead = "audit files with --from FILE, or the demo cluster with --demo"
	}
	return errors.New("no cluster is configured (" + why + "; kubegap does not fall back to http://localhost:8080): " +
		"pass --kubeconfig or --context, or " + instead)
}

// quotedNames lists a map's keys, sorted and quoted.
func quotedNames[V any](m map[string]V) string {
	names := slices.Sorted(maps.Keys(m))
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	return strings.Join(names, ", ")
}
