package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// podList builds a list of n pods with the given list metadata.
func podList(n int, meta metav1.ListMeta) *corev1.PodList {
	l := &corev1.PodList{ListMeta: meta}
	l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	for i := range n {
		l.Items = append(l.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "ns",
			Labels: map[string]string{"app": "x"}}, Spec: corev1.PodSpec{NodeName: "node-1",
			Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}})
	}
	return l
}

func encodeProto(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestListMeta(t *testing.T) {
	remaining := int64(98765)
	cases := []struct {
		name          string
		meta          metav1.ListMeta
		items         int
		wantCont      string
		wantRemaining int64
	}{
		{"last page", metav1.ListMeta{ResourceVersion: "123"}, 3, "", 0},
		{"more pages", metav1.ListMeta{ResourceVersion: "123", Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ",
			RemainingItemCount: &remaining}, 5, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ", 98765},
		{"continue without a count (field selector)", metav1.ListMeta{Continue: "tok"}, 2, "tok", 0},
		{"empty list, empty metadata", metav1.ListMeta{}, 0, "", 0},
	}
	for _, c := range cases {
		list := podList(c.items, c.meta)
		t.Run(c.name+"/protobuf", func(t *testing.T) {
			cont, rem, err := listMeta(encodeProto(t, list))
			if err != nil || cont != c.wantCont || rem != c.wantRemaining {
				t.Errorf("listMeta = %q, %d, %v; want %q, %d", cont, rem, err, c.wantCont, c.wantRemaining)
			}
		})
		t.Run(c.name+"/json", func(t *testing.T) {
			b, err := json.Marshal(list)
			if err != nil {
				t.Fatal(err)
			}
			cont, rem, err := listMeta(b)
			if err != nil || cont != c.wantCont || rem != c.wantRemaining {
				t.Errorf("listMeta = %q, %d, %v; want %q, %d", cont, rem, err, c.wantCont, c.wantRemaining)
			}
		})
	}
}

func TestListMetaRejectsBrokenBodies(t *testing.T) {
	full := encodeProto(t, podList(4, metav1.ListMeta{Continue: "tok"}))
	cases := map[string][]byte{
		"html":                   []byte("<html>proxy login</html>"),
		"protobuf magic only":    protobufMagic,
		"truncated protobuf":     full[:len(full)/2],
		"bad length":             append(append([]byte{}, protobufMagic...), 0x12, 0xff, 0xff, 0xff, 0x0f, 0x01),
		"unsupported wire type":  append(append([]byte{}, protobufMagic...), 0x13),
		"truncated varint field": append(append([]byte{}, protobufMagic...), 0x08, 0x80),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			if cont, _, err := listMeta(body); err == nil {
				t.Errorf("listMeta accepted it (continue %q)", cont)
			}
		})
	}
}

// The decoder the pipeline uses must give the same list as the REST
// client's own decoding, in both encodings.
func TestPageDecoderRoundTrip(t *testing.T) {
	want := podList(7, metav1.ListMeta{Continue: "x"})
	jsonBody, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"protobuf": encodeProto(t, want), "json": jsonBody} {
		t.Run(name, func(t *testing.T) {
			got := &corev1.PodList{}
			if _, _, err := pageDecoder.Decode(body, nil, got); err != nil {
				t.Fatal(err)
			}
			if len(got.Items) != 7 || got.Items[6].Name != "p6" || got.Items[6].Spec.Containers[0].Image != "nginx" || got.Continue != "x" {
				t.Errorf("decoded %d items, continue %q", len(got.Items), got.Continue)
			}
		})
	}
}
