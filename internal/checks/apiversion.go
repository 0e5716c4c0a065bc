package checks

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// originalAPIVersionAnnotation is where the loader records the version an
// object was written in when it converted a served-then-removed version
// (policy/v1beta1, admissionregistration.k8s.io/v1beta1, ...) to the v1
// type. Those versions defaulted some fields differently, and a check that
// reads the v1 type must apply the old defaults itself.
const originalAPIVersionAnnotation = "kubegap.dev/original-api-version"

// originalAPIVersion returns the apiVersion obj was written in when the
// loader converted it from an older one, e.g. "policy/v1beta1"; empty
// when it was read as it is.
func originalAPIVersion(obj metav1.Object) string {
	return obj.GetAnnotations()[originalAPIVersionAnnotation]
}
