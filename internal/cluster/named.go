package cluster

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// getNamed reads a Named resource object by object: one GET per name, as
// deploy/rbac.yaml grants them by resourceNames, so that kubegap never
// lists (and could never read) the other objects of the resource. A name
// that is not found does not exist; a forbidden one makes the whole
// resource forbidden. With a namespace scope only the names in it are read.
func (r *reader) getNamed(ctx context.Context, res snapshot.Resource) (*snapshot.Snapshot, error) {
	if res.Group != "" {
		return nil, fmt.Errorf("named reads serve core resources only, not %s", res)
	}
	part := snapshot.New(snapshot.Source{})
	newList, add, ok := snapshot.ListKind(res)
	if !ok {
		return nil, fmt.Errorf("named reads serve typed resources only, not %s", res)
	}
	var objs []runtime.Object
	for _, nn := range snapshot.NamesOf(res) {
		ns, name, _ := strings.Cut(nn, "/")
		if r.opts.Namespace != "" && ns != r.opts.Namespace {
			continue
		}
		var obj runtime.Object
		err := r.retry(ctx, func() error {
			var err error
			obj, err = r.typed.Get().Namespace(ns).Resource(res.Resource).Name(name).Do(ctx).Get()
			return err
		})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
	list := newList()
	if err := meta.SetList(list, objs); err != nil {
		return nil, fmt.Errorf("reading %s: %w", res, err)
	}
	add(part, list)
	if r.opts.Progress != nil {
		r.opts.Progress(res, len(objs), true)
	}
	return part, nil
}
