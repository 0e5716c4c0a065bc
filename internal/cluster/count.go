package cluster

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// count counts a CountOnly resource without keeping its objects: one LIST
// with limit=1, whose one item plus the server's remainingItemCount is the
// count. The server leaves remainingItemCount out when it cannot tell
// (selectors, some storage paths); then the pages are read and counted,
// PageSize objects at a time, and dropped.
func (r *reader) count(ctx context.Context, res snapshot.Resource) (*snapshot.Snapshot, error) {
	ri := r.dyn.Resource(res.GVR())
	var lister dynamic.ResourceInterface = ri
	ns, err := r.namespace(res)
	if err != nil {
		return nil, err
	}
	if ns != "" {
		lister = ri.Namespace(ns)
	}
	guard := newPageGuard(res, r.opts.PageSize)
	part := snapshot.New(snapshot.Source{})
	total := 0
	opts := metav1.ListOptions{Limit: 1, FieldSelector: res.FieldSelector}
	for {
		var items int
		var next string
		var remaining *int64
		err := r.retry(ctx, func() error {
			list, err := lister.List(ctx, opts)
			if err != nil {
				return err
			}
			items, next, remaining = len(list.Items), list.GetContinue(), list.GetRemainingItemCount()
			return nil
		})
		if err != nil {
			return nil, err
		}
		total += items
		if err := guard.next(next, remaining); err != nil {
			return nil, err
		}
		if next != "" && remaining != nil && *remaining >= 0 {
			total += int(*remaining)
			next = ""
		}
		if r.opts.Progress != nil {
			r.opts.Progress(res, total, next == "")
		}
		if next == "" {
			part.AddCount(res, total)
			return part, nil
		}
		opts = metav1.ListOptions{Limit: r.opts.PageSize, Continue: next, FieldSelector: res.FieldSelector}
	}
}
