package report

import (
	"fmt"
	"slices"

	"github.com/kubegap/kubegap/internal/rbacgen"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// MissingInput is one resource whose absence or incompleteness kept rules
// from a full answer, with what would complete it.
type MissingInput struct {
	Resource string          `json:"resource"`
	Status   snapshot.Status `json:"status"`
	// Complete is the coverage's completeness: objects present but not all
	// (files, a namespace scope) when Status is read.
	Complete bool `json:"complete"`
	// NeededBy lists "check/rule" pairs that needed it.
	NeededBy []string `json:"neededBy"`
	// Fix is the command or RBAC rule that would complete it.
	Fix string `json:"fix"`
}

// Missing lists the inputs that kept rules from a full answer, in the
// order of the coverage, each with its fix.
func Missing(r *Report) []MissingInput {
	need := map[string][]string{}
	for _, c := range r.Checks {
		for _, rr := range c.Rules {
			for _, m := range rr.Missing {
				who := c.ID
				if rr.ID != c.ID {
					who += "/" + rr.ID
				}
				need[m] = append(need[m], who)
			}
		}
	}
	var out []MissingInput
	for _, cov := range r.Coverage {
		who, ok := need[cov.Resource]
		if !ok {
			continue
		}
		out = append(out, MissingInput{Resource: cov.Resource, Status: cov.Status, Complete: cov.Complete,
			NeededBy: slices.Compact(who), Fix: fixFor(r.Source, cov)})
	}
	return out
}

// rbacHint says where the whole least-privilege role is: a command any
// install has, not a file only a checkout holds.
const rbacHint = "kubegap rbac prints the role for every check, kubegap rbac --user NAME | kubectl apply -f - grants it"

// fixFor says how to complete one resource's read.
func fixFor(src snapshot.Source, cov snapshot.Coverage) string {
	res, known := snapshot.Parse(cov.Resource)
	name := cov.Resource
	if known {
		name = snapshot.RecipeName(res)
	}
	switch cov.Status {
	case snapshot.StatusForbidden:
		group, plural := "", name
		if known {
			group, plural = res.Group, res.Resource
		}
		if known && res.NonResourceURL != "" {
			return "grant get on it: a ClusterRole rule " + rbacgen.Rule(res) + " (" + rbacHint + "), or save it with kubectl get --raw " +
				res.NonResourceURL + " > " + snapshot.RecipeMetrics + " as a user who may and give it to --from"
		}
		if known && res.Named {
			// Read object by object: get on the names, never list.
			return "grant get on the names kubegap reads: a ClusterRole rule " + rbacgen.Rule(res) + " (" + rbacHint + ")"
		}
		return fmt.Sprintf(`grant list on it: a ClusterRole rule {apiGroups: [%q], resources: [%q], verbs: [get, list, watch]} (%s)`, group, plural, rbacHint)
	case snapshot.StatusError:
		return "read it again: the API server failed while listing it"
	}
	if cov.Complete && len(cov.Namespaces) > 0 {
		return "audit without -n/--namespace, as a user who may list " + name + " in every namespace"
	}
	if known && res.NonResourceURL != "" {
		if src.Type == snapshot.SourceFiles || src.Type == snapshot.SourceSnapshot {
			return "save it: kubectl get --raw " + res.NonResourceURL + " > " + snapshot.RecipeMetrics + ", and add it to --from (kubegap recipe dumps it too)"
		}
		return "read it again: the API server did not answer GET " + res.NonResourceURL + " with its metrics"
	}
	switch src.Type {
	case snapshot.SourceFiles, snapshot.SourceSnapshot:
		return fmt.Sprintf("dump it whole: kubectl get %s -A -o json > DIR/%s.json beside DIR/%s (kubegap recipe prints every command)",
			name, name, snapshot.RecipeAPIResources)
	}
	return "read it: kubegap audit lists what its checks need; make sure it was not skipped"
}

// Unknown reports whether any check did not answer in full: partial or
// not evaluated, or failed with rules left partial or skipped.
func (r *Report) Unknown() bool {
	for _, c := range r.Checks {
		if c.Status == Partial || c.Status == NotEvaluated {
			return true
		}
		for _, rr := range c.Rules {
			if rr.Status != RuleEvaluated {
				return true
			}
		}
	}
	return false
}

// UnknownCompletable lists the checks a user could complete with more
// input or permissions: those with a partial or skipped rule of category
// input, or a partial status without rules to say why. Rules that need an
// opt-in source or knowledge kubegap lacks are left out
// (--fail-on-unknown without =all).
func (r *Report) UnknownCompletable() []string {
	var out []string
	for _, c := range r.Checks {
		open := false
		for _, rr := range c.Rules {
			if rr.Completable() {
				open = true
			}
		}
		if len(c.Rules) == 0 && (c.Status == Partial || c.Status == NotEvaluated) {
			open = true
		}
		if open {
			out = append(out, c.ID)
		}
	}
	return out
}

// ScopeLine is the scope as a report header prints it.
func ScopeLine(r *Report) string {
	s := r.Source.Scope.String()
	if r.Source.Type != snapshot.SourceFiles {
		return s
	}
	for _, c := range r.Coverage {
		if c.Status == snapshot.StatusRead && !c.Complete || c.Status == snapshot.StatusNotInInput {
			return s + ", files (objects not in them are unknown)"
		}
	}
	switch {
	case len(r.Source.DeclaredComplete) > 0:
		return s + ", files declared complete (not observed)"
	case r.Source.ClusterInfo != nil:
		return s + ", a kubectl cluster-info dump"
	}
	return s + ", a complete dump (kubegap recipe)"
}
