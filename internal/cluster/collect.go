package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http2"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// Options tune a live read. The zero value is usable.
type Options struct {
	// Namespace limits namespaced resources to one namespace; "" reads all.
	Namespace string
	// PageSize is the LIST page size (default 500, as kubectl's --chunk-size).
	PageSize int64
	// Concurrency bounds the resources listed at once (default 4).
	Concurrency int
	// Attempts is how often a page is tried on a transient error (default
	// 4, with exponential backoff from Backoff, default 500ms). 429s are
	// first retried by client-go itself, honouring Retry-After.
	Attempts int
	Backoff  time.Duration
	// Progress, when set, is told how many objects of a resource have been
	// read so far. It may be called from several goroutines.
	Progress func(resource snapshot.Resource, objects int, done bool)
	// Stage, when set, is told what the read does before the lists start:
	// "contacting https://HOST" before the first request, "discovering
	// APIs" before discovery, so that a slow server never leaves the user
	// without a word.
	Stage func(stage string)
	// Context names the kubeconfig context, for the report.
	Context string
}

func (o *Options) stage(s string) {
	if o.Stage != nil {
		o.Stage(s)
	}
}

// hostOnly is the server's URL without any user information a
// kubeconfig may have put in it.
func hostOnly(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return host
	}
	u.User = nil
	return u.String()
}

func (o *Options) defaults() {
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Attempts <= 0 {
		o.Attempts = 4
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
}

// UnreachableError means the API server could not be used at all: the
// kubeconfig points nowhere, the credentials are refused, or what came back
// was not an API server. The audit cannot run.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot read the API server at %s: %v", e.Host, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Prepare returns the config kubegap reads with: read-only, protobuf for
// built-in types, and a moderate client-side rate limit (QPS 50, burst 100)
// unless the caller set one. The server's APF still has the last word:
// client-go waits out 429s with their Retry-After.
func Prepare(cfg *rest.Config, userAgent string) *rest.Config {
	c := ReadOnly(cfg)
	if c.QPS == 0 {
		c.QPS = 50
	}
	if c.Burst == 0 {
		c.Burst = 100
	}
	if c.UserAgent == "" {
		c.UserAgent = userAgent
	}
	return c
}

// Collect reads the resources into a snapshot. Resources that are not
// served, forbidden or failing are recorded in the snapshot's coverage, and
// the read goes on. It returns an error only when the cluster cannot be
// read at all (*UnreachableError) or answers with something that is not
// Kubernetes API data.
func Collect(ctx context.Context, cfg *rest.Config, resources []snapshot.Resource, opts Options) (*snapshot.Snapshot, error) {
	opts.defaults()
	// The namespace goes into every namespaced path: refuse a hostile one
	// ("../nodes/x/proxy") before a single request is sent.
	if err := ValidateNamespace(opts.Namespace); err != nil {
		return nil, err
	}
	cfg = Prepare(cfg, "kubegap")
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, &UnreachableError{Host: cfg.Host, Err: err}
	}
	opts.stage("contacting " + hostOnly(cfg.Host))
	// The version request carries ctx (dc.ServerVersion would not), so
	// that Ctrl-C ends a wait on a server that never answers.
	ver, err := serverVersion(ctx, dc)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnreachableError{Host: cfg.Host, Err: explain(err)}
	}
	snap := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster, Context: opts.Context, ServerVersion: ver.GitVersion})
	if opts.Namespace != "" {
		snap.Source.Scope.Namespaces = []string{opts.Namespace}
	}

	r := &reader{opts: opts, raw: dc.RESTClient()}
	var apiResources []snapshot.Resource
	for _, res := range resources {
		if res.NonResourceURL == "" {
			apiResources = append(apiResources, res)
		}
	}
	opts.stage("discovering APIs")
	served, err := r.servedResources(ctx, r.raw, apiResources)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnreachableError{Host: cfg.Host, Err: explain(err)}
	}

	protoCfg := rest.CopyConfig(cfg)
	protoCfg.ContentType = "application/vnd.kubernetes.protobuf"
	protoCfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(protoCfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r.typed, r.dyn = cs.CoreV1().RESTClient(), dyn

	type result struct {
		res     snapshot.Resource
		part    *snapshot.Snapshot
		status  snapshot.Status
		message string
		fatal   error
	}
	results := make([]result, len(resources))
	sem := make(chan struct{}, opts.Concurrency)
	var wg sync.WaitGroup
	for i, res := range resources {
		results[i].res = res
		if d := served[res]; d.status != "" {
			results[i].status, results[i].message = d.status, d.message
			continue
		}
		wg.Add(1)
		go func(out *result) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var part *snapshot.Snapshot
			var err error
			if out.res.NonResourceURL != "" {
				part, err = r.getNonResource(ctx, out.res)
			} else {
				part, err = r.list(ctx, out.res)
			}
			out.part = part
			var unreadable *unreadableError
			switch {
			case errors.As(err, &unreadable):
				out.status, out.message = snapshot.StatusError, err.Error()
			case err == nil:
				out.status = snapshot.StatusRead
			case apierrors.IsForbidden(err):
				out.status, out.message = snapshot.StatusForbidden, statusMessage(err)
			case apierrors.IsNotFound(err) && out.res.NonResourceURL != "":
				// Not "none": the server does not let clients read it.
				out.status, out.message = snapshot.StatusError,
					"GET "+out.res.NonResourceURL+" answered 404 Not Found: the API server does not expose it to clients"
			case apierrors.IsNotFound(err):
				// Discovery announced the resource, so a 404 is a failed
				// read (a proxy, a CRD deleted meanwhile), never "none".
				out.status, out.message = snapshot.StatusError,
					"discovery announced it, but reading it answered 404 Not Found: "+statusMessage(err)
			case apierrors.IsUnauthorized(err):
				out.fatal = explain(err)
			case isTransient(err) || isEndless(err) || ctx.Err() != nil:
				out.status, out.message = snapshot.StatusError, err.Error()
			default:
				out.fatal = fmt.Errorf("reading %s: %w", out.res, err)
			}
		}(&results[i])
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, res := range results {
		if res.fatal != nil {
			return nil, &UnreachableError{Host: cfg.Host, Err: res.fatal}
		}
		if res.status == snapshot.StatusRead {
			snap.Merge(res.part)
		}
		snap.SetCoverage(res.res, res.status, res.message)
		if res.status == snapshot.StatusRead || res.status == snapshot.StatusNotServed {
			snap.SetComplete(res.res, snap.Source.Scope.Namespaces)
		}
	}
	snap.Finish()
	return snap, nil
}

// discovered is what discovery said about one resource: served (status
// ""), not served, or unknown (error, forbidden) with the reason.
type discovered struct {
	status  snapshot.Status
	message string
}

// servedResources asks discovery which of the resources the server serves.
// The group list (/api, /apis) says which group/versions exist; only those
// are asked for their resources. A group/version the list does not name is
// not served; one it names whose document cannot be read is unknown (an
// error for its resources, never "none"), and so is a 404 on it: the
// server announced it. Resources absent from a document that was read are
// not served. Discovery is allowed to every authenticated user.
//
// The documents are fetched here rather than through client-go's discovery
// client, which takes no context and turns a 404 on /api/v1 into an empty,
// successful answer.
func (r *reader) servedResources(ctx context.Context, rc rest.Interface, resources []snapshot.Resource) (map[snapshot.Resource]discovered, error) {
	announced, err := r.groupVersions(ctx, rc)
	if err != nil {
		return nil, err
	}
	out := map[snapshot.Resource]discovered{}
	byGV := map[string][]snapshot.Resource{}
	var order []string
	for _, res := range resources {
		gv := res.APIVersion()
		if byGV[gv] == nil {
			order = append(order, gv)
		}
		byGV[gv] = append(byGV[gv], res)
	}
	for _, gv := range order {
		rs := byGV[gv]
		if !announced[gv] {
			for _, res := range rs {
				out[res] = discovered{snapshot.StatusNotServed, "the server's API group list does not name " + gv}
			}
			continue
		}
		var list metav1.APIResourceList
		err := r.retry(ctx, func() error { return getJSON(ctx, rc, discoveryPath(gv), &list) })
		if err != nil {
			if fatalDiscovery(err) || ctx.Err() != nil {
				return nil, fmt.Errorf("discovering %s: %w", gv, err)
			}
			d := discovered{snapshot.StatusError, "discovering " + gv + ": " + statusMessage(err)}
			switch {
			case apierrors.IsForbidden(err):
				d.status = snapshot.StatusForbidden
			case apierrors.IsNotFound(err):
				d.message = "the API group list names " + gv + ", but its discovery document answered 404 Not Found: " + statusMessage(err)
			}
			for _, res := range rs {
				out[res] = d
			}
			continue
		}
		names := map[string]bool{}
		for _, ar := range list.APIResources {
			names[ar.Name] = true
		}
		for _, res := range rs {
			if !names[res.Resource] {
				out[res] = discovered{snapshot.StatusNotServed, gv + " does not serve " + res.Resource}
			}
		}
	}
	return out, nil
}

// groupVersions reads the API group list: /api (the core versions) and
// /apis. It must be read: without it nothing can be called not served.
func (r *reader) groupVersions(ctx context.Context, rc rest.Interface) (map[string]bool, error) {
	out := map[string]bool{}
	var core metav1.APIVersions
	if err := r.retry(ctx, func() error { return getJSON(ctx, rc, "/api", &core) }); err != nil {
		return nil, fmt.Errorf("reading the API group list (/api): %w", err)
	}
	for _, v := range core.Versions {
		out[v] = true
	}
	var groups metav1.APIGroupList
	if err := r.retry(ctx, func() error { return getJSON(ctx, rc, "/apis", &groups) }); err != nil {
		return nil, fmt.Errorf("reading the API group list (/apis): %w", err)
	}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			out[v.GroupVersion] = true
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the API group list (/api, /apis) names no group/version: not a Kubernetes API server")
	}
	return out, nil
}

// fatalDiscovery: a discovery failure that ends the read rather than
// leaving some resources unknown.
func fatalDiscovery(err error) bool {
	return apierrors.IsUnauthorized(err) || !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) && !isTransient(err)
}

func discoveryPath(gv string) string {
	if strings.Contains(gv, "/") {
		return "/apis/" + gv
	}
	return "/api/" + gv
}

// getJSON GETs a discovery document and decodes it.
func getJSON(ctx context.Context, rc rest.Interface, path string, into any) error {
	body, err := rc.Get().AbsPath(path).Do(ctx).Raw()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

type reader struct {
	// raw GETs non-resource URLs (/metrics).
	raw   rest.Interface
	typed rest.Interface
	dyn   dynamic.Interface
	opts  Options
}

// list reads every page of one resource into a snapshot of its own, so that
// a restart after an expired continue token starts from nothing.
func (r *reader) list(ctx context.Context, res snapshot.Resource) (*snapshot.Snapshot, error) {
	if res.Named {
		return r.getNamed(ctx, res)
	}
	const restarts = 3
	var err error
	for i := 0; i < restarts; i++ {
		var part *snapshot.Snapshot
		part, err = r.listOnce(ctx, res)
		if err == nil || !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			return part, err
		}
		// 410: the continue token outlived the server's compaction window.
		// Start over with a fresh, consistent list: never an RV=0 full list.
	}
	return nil, fmt.Errorf("list kept expiring after %d restarts: %w", restarts, err)
}

func (r *reader) listOnce(ctx context.Context, res snapshot.Resource) (*snapshot.Snapshot, error) {
	if res.CountOnly {
		return r.count(ctx, res)
	}
	if !res.Custom {
		return r.listPipelined(ctx, res)
	}
	part := snapshot.New(snapshot.Source{})
	ns, err := r.namespace(res)
	if err != nil {
		return nil, err
	}
	guard := newPageGuard(res, r.opts.PageSize)
	cont := ""
	total := 0
	for {
		opts := metav1.ListOptions{Limit: r.opts.PageSize, Continue: cont, FieldSelector: res.FieldSelector}
		var next string
		var n int
		var remaining *int64
		err := r.retry(ctx, func() error {
			var err error
			n, next, remaining, err = r.customPage(ctx, res, ns, opts, part)
			return err
		})
		if err != nil {
			return nil, err
		}
		total += n
		if err := guard.next(next, remaining); err != nil {
			return nil, err
		}
		if r.opts.Progress != nil {
			r.opts.Progress(res, total, next == "")
		}
		if next == "" {
			return part, nil
		}
		cont = next
	}
}

// namespace is the namespace a LIST of res is scoped to, "" for all. It
// is checked again here, where every reader builds its path, so that no
// caller can send a namespace that is not one.
func (r *reader) namespace(res snapshot.Resource) (string, error) {
	if !res.Namespaced {
		return "", nil
	}
	return r.opts.Namespace, ValidateNamespace(r.opts.Namespace)
}

// page is one LIST response body on its way to the decoder.
type page struct {
	body    []byte
	last    bool
	reserve int // room to make before adding the first page
}

// listPipelined reads the pages of a typed resource and decodes them in a
// second goroutine: page n+1 is on the wire while page n is decoded and
// trimmed, so the read takes about as long as the server takes to send.
// The continue token comes from a scan of the body's list metadata (see
// listMeta), which needs no decoding of the items.
func (r *reader) listPipelined(ctx context.Context, res snapshot.Resource) (*snapshot.Snapshot, error) {
	part := snapshot.New(snapshot.Source{})
	newList, add, _ := snapshot.ListKind(res)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// One page in the channel and one being decoded: the memory held in
	// flight stays at a few pages whatever the resource's size.
	pages := make(chan page, 1)
	decoded := make(chan error, 1)
	go func() {
		var err error
		total := 0
		for p := range pages {
			if err != nil {
				continue // drain, so the sender never blocks
			}
			if p.reserve > 0 {
				part.Reserve(res, p.reserve)
			}
			list := newList()
			if _, _, derr := pageDecoder.Decode(p.body, nil, list); derr != nil {
				err = fmt.Errorf("decoding a page of %s: %w", res, derr)
				cancel()
				continue
			}
			total += add(part, list)
			if r.opts.Progress != nil {
				r.opts.Progress(res, total, p.last)
			}
		}
		decoded <- err
	}()
	finish := func(err error) (*snapshot.Snapshot, error) {
		close(pages)
		if derr := <-decoded; err == nil {
			err = derr
		}
		if err != nil {
			return nil, err
		}
		return part, nil
	}

	ns, err := r.namespace(res)
	if err != nil {
		return finish(err)
	}
	path, err := listPath(res, ns)
	if err != nil {
		return finish(err)
	}
	guard := newPageGuard(res, r.opts.PageSize)
	cont := ""
	for first := true; ; first = false {
		opts := metav1.ListOptions{Limit: r.opts.PageSize, Continue: cont, FieldSelector: res.FieldSelector}
		var body []byte
		var next string
		var remaining int64
		err := r.retry(ctx, func() error {
			result := r.typed.Get().AbsPath(path).VersionedParams(&opts, scheme.ParameterCodec).Do(ctx)
			// Error, unlike Raw, turns a Status body into a typed API error
			// with the server's message.
			if err := result.Error(); err != nil {
				return err
			}
			var err error
			body, err = result.Raw()
			if err != nil {
				return err
			}
			next, remaining, err = listMeta(body)
			return err
		})
		if err != nil {
			return finish(err)
		}
		// listMeta reads an absent remainingItemCount as 0; a list with
		// more pages and nothing remaining cannot be, so 0 is "unknown".
		var claimed *int64
		if remaining > 0 {
			claimed = &remaining
		}
		if err := guard.next(next, claimed); err != nil {
			return finish(err)
		}
		p := page{body: body, last: next == ""}
		if first && remaining > 0 {
			p.reserve = int(r.opts.PageSize + remaining)
		}
		select {
		case pages <- p:
		case <-ctx.Done():
			return finish(ctx.Err())
		}
		if next == "" {
			return finish(nil)
		}
		cont = next
	}
}

// pageDecoder decodes LIST bodies in protobuf or JSON into typed lists,
// without conversion: what the REST client itself does for Into.
var pageDecoder = scheme.Codecs.UniversalDeserializer()

// customPage reads one page of a custom resource and appends its items to part.
func (r *reader) customPage(ctx context.Context, res snapshot.Resource, ns string, opts metav1.ListOptions, part *snapshot.Snapshot) (int, string, *int64, error) {
	ri := r.dyn.Resource(res.GVR())
	var lister dynamic.ResourceInterface = ri
	if ns != "" {
		lister = ri.Namespace(ns)
	}
	list, err := lister.List(ctx, opts)
	if err != nil {
		return 0, "", nil, err
	}
	part.AddCustom(res, list.Items)
	return len(list.Items), list.GetContinue(), list.GetRemainingItemCount(), nil
}

// listPath is the LIST path of a typed resource, in one namespace or all.
func listPath(r snapshot.Resource, ns string) (string, error) {
	if err := ValidateNamespace(ns); err != nil {
		return "", err
	}
	var b strings.Builder
	if r.Group == "" {
		b.WriteString("/api/" + r.Version)
	} else {
		b.WriteString("/apis/" + r.Group + "/" + r.Version)
	}
	if r.Namespaced && ns != "" {
		b.WriteString("/namespaces/" + ns)
	}
	b.WriteString("/" + r.Resource)
	return b.String(), nil
}

// retry runs fn until it succeeds, fails for good, or runs out of attempts.
func (r *reader) retry(ctx context.Context, fn func() error) error {
	wait := r.opts.Backoff
	var err error
	for attempt := 1; ; attempt++ {
		err = fn()
		if err == nil || ctx.Err() != nil || !isTransient(err) || attempt >= r.opts.Attempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// isTransient is true for errors worth another try: overload, timeouts,
// server errors, a dropped connection.
func isTransient(err error) bool {
	if apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err) {
		return true
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Code >= 500 {
		return true
	}
	// A dropped or timed-out connection, also in the middle of a body:
	// client-go reports a body cut short as "unexpected error when reading
	// response body" around io.ErrUnexpectedEOF or the reset, and an
	// HTTP/2 stream reset as a StreamError. (When the caller's own context
	// ends, retry and Collect stop on ctx.Err() instead.)
	var ne net.Error
	var se2 http2.StreamError
	return errors.As(err, &ne) || errors.As(err, &se2) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE)
}

func statusMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Message != "" {
		return se.Status().Message
	}
	return err.Error()
}

// explain turns the common ways a kubeconfig fails into one clear sentence.
func explain(err error) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the credentials were refused (401 Unauthorized): the token may have expired: %w", err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("access denied: %w", err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("timed out: %w", err)
	}
	return err
}

// serverVersion is discovery's ServerVersion bound to ctx.
func serverVersion(ctx context.Context, dc *discovery.DiscoveryClient) (*version.Info, error) {
	body, err := dc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("unable to parse the server version: %w", err)
	}
	return &info, nil
}

// unreadableError: a non-resource URL answered, but not with what kubegap
// reads there. The input is unknown; the read goes on.
type unreadableError struct{ err error }

func (e *unreadableError) Error() string { return e.err.Error() }

// getNonResource GETs a non-resource URL: the API server's /metrics,
// streamed through the reader that keeps only the deprecated-API and
// storage size series,
// so that tens of megabytes of metrics are never held whole.
func (r *reader) getNonResource(ctx context.Context, res snapshot.Resource) (*snapshot.Snapshot, error) {
	part := snapshot.New(snapshot.Source{})
	var series snapshot.MetricsRead
	err := r.retry(ctx, func() error {
		body, err := r.raw.Get().AbsPath(res.NonResourceURL).Stream(ctx)
		if err != nil {
			return err
		}
		defer body.Close()
		series, err = snapshot.ReadMetrics(body, "GET "+res.NonResourceURL)
		if err != nil && ctx.Err() == nil {
			return &unreadableError{fmt.Errorf("GET %s: %w", res.NonResourceURL, err)}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	part.AddMetrics(series)
	return part, nil
}
