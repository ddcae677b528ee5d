// Package wiretest helps the transports' tests (internal/wire's,
// internal/localwire's and internal/localapi's): it fills values so that a
// field lost on the way shows.
package wiretest

import "reflect"

// Filled returns a T whose every exported field (recursively) holds a
// distinct non-zero value, so a round trip that drops a field — one added
// to the model but not carried — shows as a difference.
func Filled[T any]() *T {
	var x T
	n := 0
	fill(reflect.ValueOf(&x), &n)
	return &x
}

// FillValue fills what the pointer v points to, as Filled.
func FillValue(v reflect.Value) {
	n := 0
	fill(v, &n)
}

func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString("s" + string(rune('a'+*n%26)) + string(rune('a'+*n/26%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n % 100))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n % 100))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) / 4)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), n)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

// Diff names the fields of a and b (pointers to the same struct type)
// that differ.
func Diff(a, b any) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var out []string
	for i := range va.NumField() {
		if va.Type().Field(i).IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return out
}
