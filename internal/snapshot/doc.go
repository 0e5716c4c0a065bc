// Package snapshot is the in-memory model of a cluster that checks read: the
// objects of the resources kubegap knows, trimmed to what checks use, with
// the coverage of each resource (read, forbidden, not served, ...). It loads
// from files (YAML, JSON, List objects, gzip, kubegap snapshots) and saves
// kubegap snapshot files; the live reader in package cluster fills the same
// model.
//
// # Reading files as kubectl does
//
// The loader reads what kubectl users have:
//
//   - Files that start with a byte-order mark, UTF-8 or UTF-16 of either
//     byte order (Windows PowerShell 5.1 writes "kubectl get -o yaml >
//     dump.yaml" as UTF-16LE).
//   - YAML with a key given twice in one mapping: the last value is read,
//     as kubectl and the API server read it, and a Warning names the file,
//     document, item, key and lines. LoadPaths and LoadFS pass warnings to
//     the function given with WithWarnings; the CLI prints them on stderr.
//   - Directories whose files include empty or comment-only ones, which
//     are skipped as "kubectl apply -f DIR" skips them.
//   - Large "kubectl get -o yaml" Lists: a document with a top-level
//     "items:" block sequence past 8 MiB is cut into items by lines and
//     each item converted on its own (see docScanner), so memory follows
//     the objects kept, not the size of the YAML.
//
// # Removed API versions
//
// Objects of served-then-removed group/versions of the kinds checks read
// (extensions/v1beta1 DaemonSets, Deployments and ReplicaSets; apps/v1beta1
// Deployments and StatefulSets; apps/v1beta2 workloads; policy/v1beta1
// PodDisruptionBudgets; admissionregistration.k8s.io/v1beta1 webhook
// configurations; discovery.k8s.io/v1beta1 EndpointSlices) are read as the
// current type, as the API server serves an object stored in an old
// version:
//
//   - the old version's defaults are applied where they differ from the
//     current version's and the field is absent: a v1beta1 webhook's
//     failurePolicy is Ignore (v1: Fail), timeoutSeconds 30 (v1: 10),
//     matchPolicy Exact, sideEffects Unknown; an extensions/v1beta1
//     DaemonSet's updateStrategy is OnDelete; old workloads get their
//     selector from the pod template's labels; and so on (legacyVersions);
//   - a policy/v1beta1 budget's selector is converted as the API server
//     converts it: "{}" selected no pod in v1beta1 and every pod in v1, so
//     it becomes a selector requiring the label
//     pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match, which no
//     pod carries. A check evaluating the selector gets the v1beta1
//     meaning without knowing the version;
//   - a v1beta1 EndpointSlice's topology map moves to zone and
//     deprecatedTopology;
//   - the version it was written in is kept in the annotation
//     OriginalAPIVersionAnnotation (kubegap.dev/original-api-version),
//     which trimming keeps and snapshots save; OriginalAPIVersion reads
//     it. A check that wants to say "Ignore, the v1beta1 default" rather
//     than "Ignore" reads it there.
//
// A version that never served the kind (apps/v1beta1 DaemonSet) or that
// kubegap does not know (apps/v1beta3) is an error naming it: read as the
// current version its fields could mean something else, and dropping it
// would make the input look as if the objects did not exist.
package snapshot
