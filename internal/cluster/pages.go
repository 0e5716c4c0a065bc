package cluster

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// protobufMagic starts every Kubernetes protobuf response body.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00} // "k8s\x00"

// listMeta reads a LIST response body's continue token and remaining item
// count without decoding its items, so the next page can be requested
// while this one is decoded. It understands the Kubernetes protobuf
// envelope (runtime.Unknown around the List message, whose field 1 is
// ListMeta) and, for JSON, the top-level "metadata".
func listMeta(body []byte) (cont string, remaining int64, err error) {
	if !bytes.HasPrefix(body, protobufMagic) {
		var l struct {
			Metadata struct {
				Continue           string `json:"continue"`
				RemainingItemCount *int64 `json:"remainingItemCount"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			return "", 0, fmt.Errorf("reading the list's metadata: %w", err)
		}
		if l.Metadata.RemainingItemCount != nil {
			remaining = *l.Metadata.RemainingItemCount
		}
		return l.Metadata.Continue, remaining, nil
	}
	// runtime.Unknown: 1 typeMeta, 2 raw, 3 contentEncoding, 4 contentType.
	raw, ok, err := protoField(body[len(protobufMagic):], 2)
	if err != nil || !ok {
		return "", 0, fmt.Errorf("reading the protobuf envelope: %w", orMissing(err, "raw"))
	}
	// Every List type: 1 metadata (ListMeta), 2 items.
	meta, ok, err := protoField(raw, 1)
	if err != nil {
		return "", 0, fmt.Errorf("reading the list: %w", err)
	}
	if !ok {
		return "", 0, nil // an empty ListMeta is left out
	}
	// ListMeta: 1 selfLink, 2 resourceVersion, 3 continue, 4 remainingItemCount.
	for b := meta; len(b) > 0; {
		num, typ, val, n, err := protoNext(b)
		if err != nil {
			return "", 0, fmt.Errorf("reading the list's metadata: %w", err)
		}
		switch {
		case num == 3 && typ == wireBytes:
			cont = string(val)
		case num == 4 && typ == wireVarint:
			v, _ := binary.Uvarint(val)
			remaining = int64(v)
		}
		b = b[n:]
	}
	return cont, remaining, nil
}

func orMissing(err error, field string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("no %s field", field)
}

// Protobuf wire types that Kubernetes messages use.
const (
	wireVarint = 0
	wireI64    = 1
	wireBytes  = 2
	wireI32    = 5
)

var errTruncated = errors.New("truncated protobuf message")

// protoField returns the bytes of the first length-delimited field num of
// a message.
func protoField(msg []byte, num uint64) ([]byte, bool, error) {
	for b := msg; len(b) > 0; {
		n, typ, val, size, err := protoNext(b)
		if err != nil {
			return nil, false, err
		}
		if n == num && typ == wireBytes {
			return val, true, nil
		}
		b = b[size:]
	}
	return nil, false, nil
}

// protoNext decodes the field at the start of b: its number, wire type,
// value (the payload of a length-delimited field, the raw varint bytes of
// a varint) and total size.
func protoNext(b []byte) (num uint64, typ int, val []byte, size int, err error) {
	tag, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, nil, 0, errTruncated
	}
	num, typ = tag>>3, int(tag&7)
	rest := b[n:]
	switch typ {
	case wireVarint:
		_, m := binary.Uvarint(rest)
		if m <= 0 {
			return 0, 0, nil, 0, errTruncated
		}
		return num, typ, rest[:m], n + m, nil
	case wireI64:
		if len(rest) < 8 {
			return 0, 0, nil, 0, errTruncated
		}
		return num, typ, rest[:8], n + 8, nil
	case wireI32:
		if len(rest) < 4 {
			return 0, 0, nil, 0, errTruncated
		}
		return num, typ, rest[:4], n + 4, nil
	case wireBytes:
		l, m := binary.Uvarint(rest)
		if m <= 0 || l > uint64(len(rest)-m) {
			return 0, 0, nil, 0, errTruncated
		}
		return num, typ, rest[m : m+int(l)], n + m + int(l), nil
	}
	return 0, 0, nil, 0, fmt.Errorf("unsupported protobuf wire type %d", typ)
}
