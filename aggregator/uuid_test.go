package aggregator

import "testing"

// validUUIDRef is validUUID's definition, a byte at a time.
func validUUIDRef(b []byte) bool {
	if len(b) != 36 {
		return false
	}
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// TestValidUUIDEveryByte checks validUUID against its definition for every
// value of every byte of a few UUIDs (the hyphens' included), and for
// lengths around 36.
func TestValidUUIDEveryByte(t *testing.T) {
	for _, u := range []string{
		"d3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae",
		"D3B8B8D4-BF88-4AB6-B912-6B61EB3E51AE",
		"00000000-0000-0000-0000-000000000000",
		"ffffffff-FFFF-9999-aAaA-fFfFfF0f9a9F",
	} {
		b := []byte(u)
		if !validUUID(b) {
			t.Fatalf("%s refused", u)
		}
		for i := range b {
			c0 := b[i]
			for c := 0; c < 256; c++ {
				b[i] = byte(c)
				if got, want := validUUID(b), validUUIDRef(b); got != want {
					t.Fatalf("%q (byte %d = %#x): validUUID %v, want %v", b, i, c, got, want)
				}
			}
			b[i] = c0
		}
		for _, n := range []int{0, 8, 35, 37} {
			v := []byte(u + "a")[:min(n, 37)]
			if validUUID(v) {
				t.Errorf("%q of length %d accepted", v, n)
			}
		}
	}
}

// FuzzValidUUID compares validUUID with its definition.
func FuzzValidUUID(f *testing.F) {
	f.Add([]byte("d3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae"))
	f.Add([]byte("d3b8b8d4-bf88-4ab6-b912-6b61eb3e51a\xae"))
	f.Add([]byte("d3b8b8d4-bf88-4ab6-b912-6b61eb3e51\x10\x10"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validUUID(b), validUUIDRef(b); got != want {
			t.Fatalf("%q: validUUID %v, want %v", b, got, want)
		}
	})
}

func BenchmarkValidUUID(b *testing.B) {
	id := []byte("d3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae")
	for b.Loop() {
		if !validUUID(id) {
			b.Fatal("refused")
		}
	}
}
