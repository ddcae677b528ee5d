package fsm

import (
	"hash/maphash"
	"math"
	"reflect"
	"runtime"
	"sync"
	"weak"

	"github.com/drover-hpc/drover/internal/model"
)

// shareSpec returns a spec equal to s that other jobs may already hold:
// jobs submitted alike (one shell, one loop of sbatch) carry the same
// spec, and 100,000 copies of it — each ~1 KiB of fields and environment
// slice even with interned strings — were half the controller's memory
// and nearly all of its snapshot. Specs are never changed in place (see
// SpecChange), so sharing one among jobs is safe; it changes no content,
// so replicas that share differently still hold the same state.
//
// The table holds its specs weakly: a spec no job holds any more is
// collected, and its entry goes with it.
func shareSpec(s *model.JobSpec) *model.JobSpec {
	intern(s)
	h := hashSpec(s)
	specTable.mu.Lock()
	defer specTable.mu.Unlock()
	for _, w := range specTable.m[h] {
		if p := w.Value(); p != nil && reflect.DeepEqual(p, s) {
			return p
		}
	}
	w := weak.Make(s)
	specTable.m[h] = append(specTable.m[h], w)
	runtime.AddCleanup(s, dropSpec, specKey{h, w})
	return s
}

type specKey struct {
	h uint64
	w weak.Pointer[model.JobSpec]
}

var specTable = struct {
	mu sync.Mutex
	m  map[uint64][]weak.Pointer[model.JobSpec]
}{m: map[uint64][]weak.Pointer[model.JobSpec]{}}

var specSeed = maphash.MakeSeed()

func dropSpec(k specKey) {
	specTable.mu.Lock()
	defer specTable.mu.Unlock()
	l := specTable.m[k.h]
	for i, w := range l {
		if w == k.w {
			l = append(l[:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 {
		delete(specTable.m, k.h)
	} else {
		specTable.m[k.h] = l
	}
}

// hashSpec hashes every field of a spec, whatever fields JobSpec grows.
func hashSpec(s *model.JobSpec) uint64 {
	var h maphash.Hash
	h.SetSeed(specSeed)
	hashValue(&h, reflect.ValueOf(s).Elem())
	return h.Sum64()
}

func hashValue(h *maphash.Hash, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		h.WriteString(v.String())
		h.WriteByte(0)
	case reflect.Bool:
		if v.Bool() {
			h.WriteByte(1)
		} else {
			h.WriteByte(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		maphash.WriteComparable(h, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		maphash.WriteComparable(h, v.Uint())
	case reflect.Float32, reflect.Float64:
		maphash.WriteComparable(h, math.Float64bits(v.Float()))
	case reflect.Pointer:
		if v.IsNil() {
			h.WriteByte(0)
			return
		}
		h.WriteByte(1)
		hashValue(h, v.Elem())
	case reflect.Slice, reflect.Array:
		maphash.WriteComparable(h, v.Len())
		for i := 0; i < v.Len(); i++ {
			hashValue(h, v.Index(i))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			hashValue(h, v.Field(i))
		}
	case reflect.Map:
		// Order-free: equal maps hash alike whatever their iteration.
		var sum uint64
		it := v.MapRange()
		for it.Next() {
			var e maphash.Hash
			e.SetSeed(specSeed)
			hashValue(&e, it.Key())
			hashValue(&e, it.Value())
			sum += e.Sum64()
		}
		maphash.WriteComparable(h, v.Len())
		maphash.WriteComparable(h, sum)
	default:
		// A kind JobSpec does not use yet: its length keeps equal specs
		// equal, and DeepEqual decides.
	}
}
