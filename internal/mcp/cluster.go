package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubegap/kubegap/internal/cluster"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// readCluster reads a live cluster through the read-only collector, with
// kubeconfig and context chosen as kubectl chooses them: the call's values,
// else the server's flags, else KUBECONFIG and the current context.
func (h *handlers) readCluster(ctx context.Context, in AuditInput, resources []snapshot.Resource) (*snapshot.Snapshot, error) {
	kubeconfig := in.Kubeconfig
	if kubeconfig == "" {
		kubeconfig = h.opts.Kubeconfig
	}
	if len(h.opts.AllowContexts) > 0 && kubeconfig != h.opts.Kubeconfig {
		// The allow-list names contexts; another kubeconfig could give an
		// allowed name to any cluster, so it is not accepted at all.
		return nil, fmt.Errorf("kubeconfig %q refused: this server only audits the contexts %s of its own kubeconfig; drop the kubeconfig argument",
			kubeconfig, quoteList(h.opts.AllowContexts))
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	overrides := &clientcmd.ConfigOverrides{}
	contextName := in.Context
	if contextName == "" {
		contextName = h.opts.Context
	}
	overrides.CurrentContext = contextName
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig: %w", err)
	}
	if contextName == "" {
		contextName = raw.CurrentContext
	}
	if err := h.allowContext(contextName); err != nil {
		return nil, err
	}
	if len(raw.Contexts) == 0 {
		return nil, errors.New("no kubeconfig with any context found (looked at the kubeconfig argument, the server's --kubeconfig, KUBECONFIG and ~/.kube/config): pass kubeconfig, or audit files or demo=true instead")
	}
	if contextName == "" {
		return nil, fmt.Errorf("the kubeconfig has no current context: pass context, one of %s", quoteList(slices.Sorted(maps.Keys(raw.Contexts))))
	}
	if _, ok := raw.Contexts[contextName]; !ok {
		return nil, fmt.Errorf("context %q is not in the kubeconfig: use one of %s", contextName, quoteList(slices.Sorted(maps.Keys(raw.Contexts))))
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("context %q: %w", contextName, err)
	}
	s, err := cluster.Collect(ctx, cfg, resources, cluster.Options{Namespace: in.Namespace, Context: contextName})
	if err != nil {
		return nil, fmt.Errorf("context %q: %w", contextName, err)
	}
	return s, nil
}

// allowContext enforces --allow-context.
func (h *handlers) allowContext(name string) error {
	if len(h.opts.AllowContexts) == 0 || slices.Contains(h.opts.AllowContexts, name) {
		return nil
	}
	shown := name
	if shown == "" {
		shown = "(no current context)"
	}
	return fmt.Errorf("context %q refused: this server was started with --allow-context and audits only %s; pass one of those as context, or audit files or demo=true",
		shown, quoteList(h.opts.AllowContexts))
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
