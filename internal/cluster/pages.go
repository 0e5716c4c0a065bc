package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
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
	raw, ok, err := bytesField(body[len(protobufMagic):], 2)
	if err != nil || !ok {
		return "", 0, fmt.Errorf("reading the protobuf envelope: %w", orMissing(err, "raw"))
	}
	// Every List type: 1 metadata (ListMeta), 2 items.
	meta, ok, err := bytesField(raw, 1)
	if err != nil {
		return "", 0, fmt.Errorf("reading the list: %w", err)
	}
	if !ok {
		return "", 0, nil // an empty ListMeta is left out
	}
	// ListMeta: 1 selfLink, 2 resourceVersion, 3 continue, 4 remainingItemCount.
	for b := meta; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", 0, fmt.Errorf("reading the list's metadata: %w", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == 3 && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return "", 0, fmt.Errorf("reading the list's metadata: %w", protowire.ParseError(m))
			}
			cont, n = string(v), m
		case num == 4 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return "", 0, fmt.Errorf("reading the list's metadata: %w", protowire.ParseError(m))
			}
			remaining, n = int64(v), m
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return "", 0, fmt.Errorf("reading the list's metadata: %w", protowire.ParseError(n))
			}
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

// bytesField returns the payload of the first length-delimited field num
// of a message.
func bytesField(msg []byte, num protowire.Number) ([]byte, bool, error) {
	for b := msg; len(b) > 0; {
		n, typ, size := protowire.ConsumeTag(b)
		if size < 0 {
			return nil, false, protowire.ParseError(size)
		}
		b = b[size:]
		if n == num && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, false, protowire.ParseError(m)
			}
			return v, true, nil
		}
		if size = protowire.ConsumeFieldValue(n, typ, b); size < 0 {
			return nil, false, protowire.ParseError(size)
		}
		b = b[size:]
	}
	return nil, false, nil
}
