package core

import "testing"

func TestKeyHintOf(t *testing.T) {
	for _, tc := range []struct{ rule, header, want string }{
		{"our key's shape", "Bearer sk_test_abcdefghijklmnopqrstuvwxyz1234", "sk_test_…1234"},
		{"any case of bearer", "bearer sk_live_abcdefghijklmnop9876", "sk_live_…9876"},
		{"too short to show four", "Bearer sk_test_abcd1234", ""},
		{"not our key", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijkl", ""},
		{"not bearer", "Basic dXNlcjpwYXNz", ""},
		{"odd characters", "Bearer sk_test_abcdefghijklmnop<script>x", ""},
	} {
		if got := keyHintOf([]byte(tc.header)); got != tc.want {
			t.Errorf("%s: keyHintOf(%q) = %q, want %q", tc.rule, tc.header, got, tc.want)
		}
	}
}

// A log line never carries a dashboard link's token, whatever its shape.
func TestLoggablePath(t *testing.T) {
	for in, want := range map[string]string{
		"/dashboard/setup/ab-cd_ef0123456789abcdefghij-klmnop_qrstuvwxy": "/dashboard/setup/[redacted]",
		"/dashboard/invitations/x":                                       "/dashboard/invitations/[redacted]",
		"/dashboard/reset/ab-cd_ef0123456789abcdefghij-klmnop_qrstuvwxy": "/dashboard/reset/[redacted]",
		"/v1/payouts/by-reference/0241234567":                            "/v1/payouts/by-reference/[redacted]",
		"/v1/payouts":                                                    "/v1/payouts",
	} {
		if got := loggablePath(in); got != want {
			t.Errorf("loggablePath(%q) = %q, want %q", in, got, want)
		}
	}
}
