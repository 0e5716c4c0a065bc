package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

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
	if err := ValidateNamespace(r.opts.Namespace); err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for _, nn := range snapshot.NamesOf(res) {
		ns, name, _ := strings.Cut(nn, "/")
		if r.opts.Namespace != "" && ns != r.opts.Namespace {
			continue
		}
		if err := ValidateNamespace(ns); err != nil || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return nil, fmt.Errorf("reading %s: %q is not a namespace/name", res, nn)
		}
		var obj runtime.Object
		err := r.retry(ctx, func() error {
			var err error
			obj, err = r.typed.Get().Namespace(ns).Resource(res.Resource).Name(name).Do(ctx).Get()
			return err
		})
		if notFound(err, res, name) {
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

// notFound is true when the API server says the object does not exist: a
// 404 whose Status names that object, as the API server's always does. Any
// other 404 (a proxy's, a Status about something else) is a failed read,
// so it cannot make the object look absent.
func notFound(err error, res snapshot.Resource, name string) bool {
	var se apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &se) {
		return false
	}
	d := se.Status().Details
	return d != nil && d.Name == name && d.Kind == res.Resource
}
