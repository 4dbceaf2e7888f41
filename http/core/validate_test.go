package core

import "testing"

// A phone number is the country code and the subscriber number, with or
// without a leading +, and is stored as digits only.
func TestPhone(t *testing.T) {
	const digitsOnly = "must contain digits only, with the country code and an optional leading +"
	const length = "must be 8 to 15 digits"
	for _, tc := range []struct {
		name    string
		in      string
		want    string // the number as stored, when it is accepted
		problem string // the message, when it is refused
	}{
		{"digits", "233241234567", "233241234567", ""},
		{"leading plus", "+233241234567", "233241234567", ""},
		{"shortest", "23324123", "23324123", ""},
		{"shortest with plus", "+23324123", "23324123", ""},
		{"longest with plus", "+233241234567890", "233241234567890", ""},
		{"too short once the plus is gone", "+2332412", "", length},
		{"too long once the plus is gone", "+2332412345678901", "", length},
		{"plus alone", "+", "", length},
		{"two pluses", "++233241234567", "", digitsOnly},
		{"plus inside", "233+241234567", "", digitsOnly},
		{"trailing plus", "233241234567+", "", digitsOnly},
		{"spaces", "+233 24 123 4567", "", digitsOnly},
		{"dashes", "233-24-123-4567", "", digitsOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Problems
			got := p.Phone("to.accountNumber", tc.in)
			switch {
			case tc.problem == "" && len(p) > 0:
				t.Fatalf("phone(%q) refused: %v", tc.in, p)
			case tc.problem == "" && got != tc.want:
				t.Fatalf("phone(%q) = %q, want %q", tc.in, got, tc.want)
			case tc.problem != "" && (len(p) != 1 || p[0].Field != "to.accountNumber" || p[0].Message != tc.problem):
				t.Fatalf("phone(%q): problems %v, want one: %s", tc.in, p, tc.problem)
			}
		})
	}
}
