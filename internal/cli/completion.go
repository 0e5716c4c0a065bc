package cli

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegap/kubegap/internal/cluster"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Shell completion with values: cobra's `kubegap completion bash|zsh|fish|
// powershell` scripts ask the binary (__complete) for these lists.

func severityNames() []string {
	var out []string
	for _, s := range finding.Severities() {
		out = append(out, s.String())
	}
	return out
}

func fixed(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// checkIDs completes check IDs, comma-separated lists included.
func checkIDs(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	prefix := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix = toComplete[:i+1]
	}
	var out []string
	for _, c := range checks.All() {
		out = append(out, prefix+c.ID)
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// caseIDs completes library case IDs.
func caseIDs(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	lib, err := library.Default()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []string
	for _, c := range lib.Cases() {
		out = append(out, c.ID+"\t"+c.Title)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func registerAuditCompletions(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("output", fixed(outputNames()...))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", fixed(append(severityNames(), "none")...))
	_ = cmd.RegisterFlagCompletionFunc("min-severity", fixed(severityNames()...))
	_ = cmd.RegisterFlagCompletionFunc("color", fixed("auto", "always", "never"))
	_ = cmd.RegisterFlagCompletionFunc("fail-on-unknown", fixed(failOnUnknownInput, failOnUnknownAll))
	_ = cmd.RegisterFlagCompletionFunc("checks", checkIDs)
	_ = cmd.RegisterFlagCompletionFunc("skip-checks", checkIDs)
	_ = cmd.RegisterFlagCompletionFunc("complete-kinds", resourceNames)
}

// resourceNames completes the resources kubegap reads, as kubectl names
// them, comma-separated lists included.
func resourceNames(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	prefix := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix = toComplete[:i+1]
	}
	var out []string
	for _, r := range snapshot.Known() {
		out = append(out, prefix+snapshot.RecipeName(r))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// registerKubeCompletions completes --context from the kubeconfig and
// -n/--namespace from the cluster (a read-only LIST, as kubectl does).
func registerKubeCompletions(cmd *cobra.Command, f *sourceFlags) {
	_ = cmd.RegisterFlagCompletionFunc("context", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		raw, err := f.kube.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names := make([]string, 0, len(raw.Contexts))
		for n := range raw.Contexts {
			names = append(names, n)
		}
		slices.Sort(names)
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := f.kube.ToRESTConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		cs, err := kubernetes.NewForConfig(cluster.ReadOnly(cfg))
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		ctx, cancel := context.WithTimeout(c.Context(), 5*time.Second)
		defer cancel()
		list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, ns := range list.Items {
			names = append(names, ns.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}

// facetValues completes the values of one library facet, with names.
func facetValues(facet string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		lib, err := library.Default()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		tax := lib.Taxonomy()
		var out []string
		for _, t := range tax.Terms(facet) {
			out = append(out, t.ID+"\t"+t.Name)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// oneCheckID completes a single check ID (checks show).
func oneCheckID(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, c := range checks.All() {
		out = append(out, c.ID+"\t"+c.Title)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
