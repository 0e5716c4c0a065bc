// Package floor is the benchmark's lower bound: it sends exactly the
// paginated LISTs a live kubegap audit sends (same resources, page size,
// content type and field selectors, same concurrency and client-side rate
// limit), decodes each page as any client must, and keeps nothing. No audit
// of the same cluster through the same API server can be faster than this.
package floor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// Options tune the lister. The defaults are kubegap's own.
type Options struct {
	// PageSize is the LIST limit (default 500).
	PageSize int64
	// Concurrency bounds the resources listed at once (default 4).
	Concurrency int
	// QPS and Burst are the client-side rate limit (default 50 and 100).
	QPS   float32
	Burst int
}

func (o *Options) defaults() {
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.QPS == 0 {
		o.QPS = 50
	}
	if o.Burst <= 0 {
		o.Burst = 100
	}
}

// Count is what was read of one resource.
type Count struct {
	Resource snapshot.Resource
	Objects  int
	Pages    int
	Elapsed  time.Duration
	// NotServed is true when the server answered 404 for the resource.
	NotServed bool
}

// List reads every page of every resource and discards the objects. It
// fails on the first error: the floor is only meaningful for a full read.
func List(ctx context.Context, cfg *rest.Config, resources []snapshot.Resource, opts Options) ([]Count, error) {
	opts.defaults()
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = opts.QPS, opts.Burst
	c.UserAgent = "kubegap-floor"
	proto := rest.CopyConfig(c)
	proto.ContentType = "application/vnd.kubernetes.protobuf"
	proto.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(proto)
	if err != nil {
		return nil, fmt.Errorf("building the protobuf client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("building the dynamic client: %w", err)
	}
	rc := cs.CoreV1().RESTClient()

	out := make([]Count, len(resources))
	errs := make([]error, len(resources))
	sem := make(chan struct{}, opts.Concurrency)
	var wg sync.WaitGroup
	for i, res := range resources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = listAll(ctx, rc, dyn, res, opts.PageSize)
			if apierrors.IsNotFound(errs[i]) {
				// Not served (a CRD that is not installed): kubegap
				// learns that from discovery and reads nothing either.
				out[i], errs[i] = Count{Resource: res, NotServed: true}, nil
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", resources[i], err)
		}
	}
	return out, nil
}

func listAll(ctx context.Context, rc rest.Interface, dyn dynamic.Interface, res snapshot.Resource, limit int64) (Count, error) {
	began := time.Now()
	cnt := Count{Resource: res}
	if res.NonResourceURL != "" {
		// As kubegap reads it (the API server's /metrics): one GET of the
		// URL, the body read whole.
		if _, err := rc.Get().AbsPath(res.NonResourceURL).DoRaw(ctx); err != nil {
			return cnt, err
		}
		cnt.Objects = 1
		cnt.Elapsed = time.Since(began)
		return cnt, nil
	}
	if res.Named {
		// As kubegap reads them: one GET per name, a missing one is none.
		for _, nn := range snapshot.NamesOf(res) {
			ns, name, _ := strings.Cut(nn, "/")
			err := rc.Get().AbsPath("/api", res.Version, "namespaces", ns, res.Resource, name).Do(ctx).Error()
			switch {
			case err == nil:
				cnt.Objects++
			case !apierrors.IsNotFound(err):
				return cnt, err
			}
		}
		cnt.Elapsed = time.Since(began)
		return cnt, nil
	}
	cont := ""
	for {
		opts := metav1.ListOptions{Limit: limit, Continue: cont, FieldSelector: res.FieldSelector}
		if res.CountOnly && cont == "" {
			// As kubegap counts: one object and the server's count of the rest.
			opts.Limit = 1
		}
		var n int
		var next string
		if res.Custom {
			list, err := dyn.Resource(res.GVR()).List(ctx, opts)
			if err != nil {
				return cnt, err
			}
			n, next = len(list.Items), list.GetContinue()
			if rem := list.GetRemainingItemCount(); res.CountOnly && cont == "" && next != "" && rem != nil {
				n, next = n+int(*rem), ""
			}
		} else {
			newList, _, _ := snapshot.ListKind(res)
			list := newList()
			if err := rc.Get().AbsPath(path(res)).VersionedParams(&opts, scheme.ParameterCodec).Do(ctx).Into(list); err != nil {
				return cnt, err
			}
			lm, ok := list.(metav1.ListInterface)
			if !ok {
				return cnt, fmt.Errorf("%T is not a list", list)
			}
			next = lm.GetContinue()
			n = meta.LenList(list)
		}
		cnt.Objects += n
		cnt.Pages++
		if next == "" {
			cnt.Elapsed = time.Since(began)
			return cnt, nil
		}
		cont = next
	}
}

func path(r snapshot.Resource) string {
	var b strings.Builder
	if r.Group == "" {
		b.WriteString("/api/" + r.Version)
	} else {
		b.WriteString("/apis/" + r.Group + "/" + r.Version)
	}
	b.WriteString("/" + r.Resource)
	return b.String()
}
