package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/report/policyreport"
)

// FieldManager is the server-side apply field manager of every write.
const FieldManager = "kubegap"

// Options say what to publish and where.
type Options struct {
	Format policyreport.Format
	// Scope lists the namespaces the audit read; empty is every
	// namespace. Only reports in scope are ever deleted: a namespace the
	// audit did not look at is not one without findings.
	Scope []string
	// Log gets one line per object written or deleted.
	Log io.Writer
}

// Result counts what Publish did. Skipped counts the reports of
// namespaces deleted since the audit.
type Result struct {
	Applied, Deleted, Skipped int
}

// Publish server-side applies objs (policyreport.Unstructured's output:
// namespaced reports, then the cluster report) and deletes kubegap's
// reports (by the managed-by label) that this run did not write: those of
// namespaces in scope that no longer have findings, and, after a
// cluster-wide audit, any cluster report of another name (a namespace
// audit's, see policyreport.ClusterReportName). The client must be one of
// ReportsOnly's.
func Publish(ctx context.Context, client dynamic.Interface, objs []*unstructured.Unstructured, o Options) (Result, error) {
	var res Result
	nsGVR, clusterGVR := policyreport.Resources(o.Format)
	written := map[string]bool{} // namespace/name, "" namespace for the cluster report
	for _, u := range objs {
		ri := dynamic.ResourceInterface(client.Resource(clusterGVR))
		if ns := u.GetNamespace(); ns != "" {
			ri = client.Resource(nsGVR).Namespace(ns)
		}
		if _, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			if ns := u.GetNamespace(); ns != "" && namespaceGone(err, ns) {
				// Deleted since the audit: there is nothing left to
				// report on, nor a report to keep.
				res.Skipped++
				logf(o.Log, "skipped %s %s (namespace %s no longer exists)\n", u.GetKind(), objName(u), ns)
				continue
			}
			return res, fmt.Errorf("writing %s %s: %w", u.GetKind(), objName(u), explain(err, o.Format))
		}
		res.Applied++
		written[u.GetNamespace()+"/"+u.GetName()] = true
		results, _, _ := unstructured.NestedSlice(u.Object, "results")
		logf(o.Log, "applied %s %s (%s)\n", u.GetKind(), objName(u), report.Plural(len(results), "result", "results"))
	}

	sel := metav1.ListOptions{LabelSelector: policyreport.Selector}
	stale := func(ri dynamic.ResourceInterface, gvrKind string, inScope func(ns string) bool) error {
		list, err := ri.List(ctx, sel)
		if err != nil {
			return fmt.Errorf("listing kubegap's %s: %w", gvrKind, explain(err, o.Format))
		}
		for i := range list.Items {
			it := &list.Items[i]
			if written[it.GetNamespace()+"/"+it.GetName()] || !inScope(it.GetNamespace()) {
				continue
			}
			target := dynamic.ResourceInterface(client.Resource(clusterGVR))
			if ns := it.GetNamespace(); ns != "" {
				target = client.Resource(nsGVR).Namespace(ns)
			}
			uid := it.GetUID()
			err := target.Delete(ctx, it.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s %s: %w", gvrKind, objName(it), err)
			}
			res.Deleted++
			why := "no finding there now"
			if it.GetNamespace() == "" {
				why = "a namespace audit's cluster report, replaced by this cluster-wide run"
			}
			logf(o.Log, "deleted %s %s (%s)\n", it.GetKind(), objName(it), why)
		}
		return nil
	}
	inScope := func(ns string) bool { return len(o.Scope) == 0 || slices.Contains(o.Scope, ns) }
	if len(o.Scope) == 0 {
		if err := stale(client.Resource(nsGVR), nsGVR.Resource, inScope); err != nil {
			return res, err
		}
	} else {
		for _, ns := range o.Scope {
			if err := stale(client.Resource(nsGVR).Namespace(ns), nsGVR.Resource, inScope); err != nil {
				return res, err
			}
		}
	}
	// A cluster-wide run's cluster report replaces every earlier one,
	// namespace audits' included; a namespace audit's replaces only its
	// own, which it just applied.
	if len(o.Scope) == 0 {
		if err := stale(client.Resource(clusterGVR), clusterGVR.Resource, func(string) bool { return true }); err != nil {
			return res, err
		}
	}
	return res, nil
}

// namespaceGone reports whether err is the API server's "namespaces NS
// not found", which it answers for a write into a namespace that does not
// exist.
func namespaceGone(err error, ns string) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Kind == "namespaces" && d.Name == ns
}

// explain says what to check when the server answers 404 for the report
// API: it is served only where its CRDs are installed.
func explain(err error, f policyreport.Format) error {
	if !apierrors.IsNotFound(err) {
		return err
	}
	ns, cl := policyreport.Resources(f)
	return fmt.Errorf("%w (does the cluster serve %s %s and %s? Their CRDs must be installed: see docs/fleet.md)",
		err, ns.GroupVersion(), ns.Resource, cl.Resource)
}

func objName(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}
