package testkit

import (
	"encoding/json"
	"testing"
)

// JSON returns v encoded as JSON, for a test that looks for words in it;
// it fails t if v does not encode.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
