package tlsdec

import "strconv"

func (k Kind) String() string {
	switch k {
	case KindData:
		return "data"
	case KindSession:
		return "session"
	case KindProblem:
		return "problem"
	case KindResync:
		return "resync"
	case KindAlert:
		return "alert"
	}
	return "kind " + strconv.Itoa(int(k))
}

func (p Problem) String() string {
	switch p {
	case ProblemOversize:
		return "oversize_record"
	case ProblemMalformed:
		return "malformed_record"
	case ProblemAuth:
		return "authentication_failed"
	case ProblemTruncated:
		return "truncated_record"
	case ProblemHandshake:
		return "malformed_handshake"
	case ProblemBacklog:
		return "hello_missing"
	case ProblemNoResync:
		return "no_resync"
	}
	return "problem " + strconv.Itoa(int(p))
}

// alertNames are RFC 8446's (and RFC 5246's) alert descriptions.
var alertNames = map[uint8]string{
	0: "close_notify", 10: "unexpected_message", 20: "bad_record_mac", 22: "record_overflow",
	40: "handshake_failure", 42: "bad_certificate", 43: "unsupported_certificate", 44: "certificate_revoked",
	45: "certificate_expired", 46: "certificate_unknown", 47: "illegal_parameter", 48: "unknown_ca",
	49: "access_denied", 50: "decode_error", 51: "decrypt_error", 70: "protocol_version",
	71: "insufficient_security", 80: "internal_error", 86: "inappropriate_fallback", 90: "user_canceled",
	100: "no_renegotiation", 109: "missing_extension", 110: "unsupported_extension", 112: "unrecognized_name",
	113: "bad_certificate_status_response", 115: "unknown_psk_identity", 116: "certificate_required",
	120: "no_application_protocol",
}

// AlertName names a TLS alert description, e.g. "close_notify"; unknown ones are "alert 123".
func AlertName(desc uint8) string {
	if n, ok := alertNames[desc]; ok {
		return n
	}
	return "alert " + strconv.Itoa(int(desc))
}
