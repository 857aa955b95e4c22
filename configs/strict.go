package configs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// MergedMap is a config map whose entries merge field by field over the
// entry of the same key already there (its default), as objects do: a file
// that sets only cache.routes.content_hub.ttl keeps that route's stale
// windows. A key without a default starts from the zero value.
type MergedMap[V any] map[string]V

// UnmarshalJSON decodes an object of entries over m's.
func (m *MergedMap[V]) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if *m == nil {
		*m = MergedMap[V]{}
	}
	for k, r := range raw {
		v := (*m)[k]
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return err
		}
		(*m)[k] = v
	}
	return nil
}

// checkStrict walks the JSON document b against the type t (Config) and
// reports what encoding/json would take silently or without a path: an
// unknown field (named with the object it is in), a field name not spelled
// exactly as documented (encoding/json matches names case-insensitively),
// a key given twice in one object (the last would win), a null (it would
// wipe a map of defaults or leave a value as it was), and anything after
// the top-level value. Each error names the field's path.
//
// A document that is not well-formed JSON passes: the decoder that reads
// it next reports that, as it always did.
func checkStrict(b []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := walkStrict(dec, t, ""); err != nil {
		var se strictError
		if errors.As(err, &se) {
			return err
		}
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return strictError{errors.New("unexpected content after the top-level object")}
	}
	return nil
}

// strictError is a finding of checkStrict (not a syntax error).
type strictError struct{ error }

func walkStrict(dec *json.Decoder, t reflect.Type, path string) error {
	name := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		if path == "" {
			return strictError{errors.New("the config must be an object, not null")}
		}
		return strictError{fmt.Errorf("%s: must not be null (leave the field out to keep its default)", path)}
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar: its type is checked by the decoder
	}
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkStrict(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			if seen[k] {
				return strictError{fmt.Errorf("%s: given twice", name(k))}
			}
			seen[k] = true
			var sub reflect.Type
			switch {
			case t == nil:
			case t.Kind() == reflect.Map:
				sub = t.Elem()
			case t.Kind() == reflect.Struct:
				f, found, fold := fieldByJSONName(t, k)
				switch {
				case !found && fold != "":
					return strictError{fmt.Errorf("%s: unknown field (did you mean %s? names are case-sensitive)", name(k), name(fold))}
				case !found && path == "":
					return strictError{fmt.Errorf("unknown field %q", k)}
				case !found:
					// encoding/json's own error gives no path: "brust"
					// in which of the plans?
					return strictError{fmt.Errorf("%s: unknown field %q", path, k)}
				}
				sub = f
			}
			if err := walkStrict(dec, sub, name(k)); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// fieldByJSONName returns the type of t's field whose json name is k;
// when none is, fold is the json name k matches only case-insensitively
// (or "").
func fieldByJSONName(t reflect.Type, k string) (ft reflect.Type, found bool, fold string) {
	for i := range t.NumField() {
		f := t.Field(i)
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if n == "-" || !f.IsExported() {
			continue
		}
		if n == "" {
			n = f.Name
		}
		if n == k {
			return f.Type, true, ""
		}
		if fold == "" && strings.EqualFold(n, k) {
			fold = n
		}
	}
	return nil, false, fold
}
