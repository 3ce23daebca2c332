package dissect

import (
	"strconv"
	"time"
)

// The summaries of the APIs that change or read a cluster's security
// beyond ACLs: configs, client quotas, SCRAM credentials and delegation
// tokens. Each says what is changed and how, as the audit reads it, so that
// a --summary line answers "what did this request do" without the tree.
// Secret values (sensitive configs, salts, HMACs) are never shown.

// appendAdmin writes the details of one of those messages; false when key
// is none of them.
func appendAdmin(b []byte, key int16, body *Node, head int, req bool) ([]byte, bool) {
	switch {
	case key == 33 && req: // AlterConfigs
		b = appendEachOf(b, head, body.Child("Resources"), "; ", func(b []byte, r *Node) []byte {
			return appendConfigChanges(b, r, false)
		})
		b = appendFlag(b, head, body, "ValidateOnly", "validate only")
	case key == 44 && req: // IncrementalAlterConfigs
		b = appendEachOf(b, head, body.Child("Resources"), "; ", func(b []byte, r *Node) []byte {
			return appendConfigChanges(b, r, true)
		})
		b = appendFlag(b, head, body, "ValidateOnly", "validate only")
	case key == 33 || key == 44:
		b = appendEachOf(b, head, body.Child("Responses"), ", ", appendResource)
	case key == 32 && req: // DescribeConfigs
		b = appendEachOf(b, head, body.Child("Resources"), "; ", func(b []byte, r *Node) []byte {
			b = appendResource(b, r)
			if ks := r.Child("ConfigurationKeys"); ks != nil && ks.HasValue() && !ks.Null && ks.Int > 0 {
				b = append(b, ": "...)
				b = appendNames(b, ks, nil)
			}
			return b
		})
	case key == 32:
		b = appendEachOf(b, head, body.Child("Results"), "; ", func(b []byte, r *Node) []byte {
			b = appendResource(b, r)
			if cs := r.Child("Configs"); cs != nil && cs.HasValue() && !cs.Null {
				b = append(b, ": "...)
				b = appendPlural(b, cs.Int, "config")
			}
			return b
		})
	case key == 49 && req: // AlterClientQuotas
		b = appendEachOf(b, head, body.Child("Entries"), "; ", func(b []byte, e *Node) []byte {
			b = appendQuotaEntity(b, e.Child("Entity"))
			b = append(b, ": "...)
			return appendEachOf(b, len(b), e.Child("Ops"), ", ", func(b []byte, op *Node) []byte {
				if rm, ok := num(op, "Remove"); ok && rm != 0 {
					b = append(b, "remove "...)
					return appendStr(b, op.Child("Key"))
				}
				b = appendStr(b, op.Child("Key"))
				b = append(b, '=')
				return appendFloat(b, op.Child("Value"))
			})
		})
		b = appendFlag(b, head, body, "ValidateOnly", "validate only")
	case key == 49:
		b = appendEachOf(b, head, body.Child("Entries"), "; ", func(b []byte, e *Node) []byte {
			return appendQuotaEntity(b, e.Child("Entity"))
		})
	case key == 48 && req: // DescribeClientQuotas
		b = appendEachOf(b, head, body.Child("Components"), ", ", func(b []byte, c *Node) []byte {
			b = appendStr(b, c.Child("EntityType"))
			b = append(b, ' ')
			switch mt, _ := num(c, "MatchType"); mt {
			case 0:
				return appendStr(b, c.Child("Match"))
			case 1:
				return append(b, "default"...)
			}
			return append(b, "any"...)
		})
		b = appendFlag(b, head, body, "Strict", "strict")
	case key == 48:
		b = appendEachOf(b, head, body.Child("Entries"), "; ", func(b []byte, e *Node) []byte {
			b = appendQuotaEntity(b, e.Child("Entity"))
			return appendSublist(b, e.Child("Values"), func(b []byte, v *Node) []byte {
				b = appendStr(b, v.Child("Key"))
				b = append(b, '=')
				return appendFloat(b, v.Child("Value"))
			})
		})
	case key == 51 && req: // AlterUserScramCredentials
		b = appendEachOf(b, head, body.Child("Upsertions"), "; ", func(b []byte, u *Node) []byte {
			return appendIterations(appendScram(append(b, "upsert "...), u), u)
		})
		b = appendEachOf(b, head, body.Child("Deletions"), "; ", func(b []byte, d *Node) []byte {
			return appendScram(append(b, "delete "...), d)
		})
	case key == 51:
		b = appendCount(b, head, body.Child("Results"), "user", "User")
	case key == 50 && req: // DescribeUserScramCredentials
		if us := body.Child("Users"); us != nil && us.HasValue() && us.Null {
			b = append(sep(b, head), "all users"...)
		} else {
			b = appendCount(b, head, us, "user", "Name")
		}
	case key == 50:
		b = appendEachOf(b, head, body.Child("Results"), "; ", func(b []byte, r *Node) []byte {
			b = appendStr(b, r.Child("User"))
			return appendSublist(b, r.Child("CredentialInfos"), func(b []byte, c *Node) []byte {
				return appendIterations(appendSym(b, c.Child("Mechanism")), c)
			})
		})
	case key == 38 && req: // CreateDelegationToken
		if p, ok := principalOf(body, "OwnerPrincipalType", "OwnerPrincipalName"); ok {
			b = append(sep(b, head), "owner "...)
			b = appendClipped(b, p)
		}
		if rs := body.Child("Renewers"); rs != nil && rs.HasValue() && rs.Int > 0 {
			b = append(sep(b, head), "renewers "...)
			b = appendNames(b, rs, func(e *Node) string { p, _ := principalOf(e, "PrincipalType", "PrincipalName"); return p })
		}
		b = appendPeriod(b, head, body, "MaxLifetimeMs", "max lifetime")
	case key == 38:
		b = appendLabeled(b, head, body, "TokenId", "token")
		if p, ok := principalOf(body, "PrincipalType", "PrincipalName"); ok {
			b = append(sep(b, head), "owner "...)
			b = appendClipped(b, p)
		}
		b = appendExpiry(b, head, body)
	case key == 39 && req: // RenewDelegationToken
		b = appendPeriod(b, head, body, "RenewPeriodMs", "renew by")
	case key == 40 && req: // ExpireDelegationToken
		if ms, ok := num(body, "ExpiryTimePeriodMs"); ok && ms < 0 {
			b = append(sep(b, head), "expire now"...)
		} else {
			b = appendPeriod(b, head, body, "ExpiryTimePeriodMs", "expire in")
		}
	case key == 41 && req: // DescribeDelegationToken
		if os := body.Child("Owners"); os != nil && os.HasValue() && os.Null {
			b = append(sep(b, head), "all owners"...)
		} else if os != nil && os.HasValue() {
			b = sep(b, head)
			b = append(b, "owners "...)
			b = appendNames(b, os, func(e *Node) string { p, _ := principalOf(e, "PrincipalType", "PrincipalName"); return p })
		}
	case key == 41:
		b = appendCount(b, head, body.Child("Tokens"), "token", "TokenId")
	case key == 39 || key == 40:
		b = appendExpiry(b, head, body)
	default:
		return b, false
	}
	return b, true
}

// appendEachOf writes up to namesShown elements of arr with each, joined
// by between, and how many more it holds.
func appendEachOf(b []byte, head int, arr *Node, between string, each func([]byte, *Node) []byte) []byte {
	if arr == nil || !arr.HasValue() || arr.Null || arr.Int <= 0 {
		return b
	}
	b = sep(b, head)
	shown := 0
	elems(arr, func(e *Node) {
		if shown == namesShown {
			return
		}
		if shown > 0 {
			b = append(b, between...)
		}
		b = each(b, e)
		shown++
	})
	return appendMore(b, arr, shown)
}

// appendSublist writes ": " and each of arr's elements after an item of a
// list, when arr has any.
func appendSublist(b []byte, arr *Node, each func([]byte, *Node) []byte) []byte {
	if arr == nil || !arr.HasValue() || arr.Null || arr.Int <= 0 {
		return b
	}
	return appendEachOf(append(b, ": "...), len(b)+2, arr, ", ", each)
}

// appendResource writes a config resource: "TOPIC orders".
func appendResource(b []byte, r *Node) []byte {
	b = appendSym(b, r.Child("ResourceType"))
	b = append(b, ' ')
	return appendStr(b, r.Child("ResourceName"))
}

// appendConfigChanges writes a resource and what a request sets on it:
// "TOPIC orders: set cleanup.policy=compact, delete retention.ms"; without
// ops (AlterConfigs, which replaces the whole set) "TOPIC orders:
// retention.ms=3600000".
func appendConfigChanges(b []byte, r *Node, ops bool) []byte {
	b = appendResource(b, r)
	cs := r.Child("Configs")
	if cs == nil || !cs.HasValue() || cs.Null || cs.Int <= 0 {
		return b
	}
	b = append(b, ": "...)
	return appendEachOf(b, len(b), cs, ", ", func(b []byte, c *Node) []byte {
		op := int64(0)
		if ops {
			op, _ = num(c, "ConfigOperation")
			switch op {
			case 0:
				b = append(b, "set "...)
			case 1:
				b = append(b, "delete "...)
			case 2:
				b = append(b, "append "...)
			case 3:
				b = append(b, "subtract "...)
			default:
				b = append(b, "op "...)
				b = strconv.AppendInt(b, op, 10)
				b = append(b, ' ')
			}
		}
		b = appendStr(b, c.Child("Name"))
		if op == 1 {
			return b
		}
		b = append(b, '=')
		return appendStr(b, c.Child("Value"))
	})
}

// appendQuotaEntity writes a client quota entity: "user alice, client-id
// default" (a null name is the entity's default).
func appendQuotaEntity(b []byte, parts *Node) []byte {
	n := 0
	elems(parts, func(p *Node) {
		if n > 0 {
			b = append(b, ", "...)
		}
		n++
		b = appendStr(b, p.Child("EntityType"))
		b = append(b, ' ')
		if name := p.Child("EntityName"); name != nil && name.HasValue() && name.Null {
			b = append(b, "default"...)
		} else {
			b = appendStr(b, name)
		}
	})
	if n == 0 {
		b = append(b, "?"...)
	}
	return b
}

// appendScram writes whose credential of which mechanism: "alice SCRAM-SHA-256".
func appendScram(b []byte, n *Node) []byte {
	b = appendStr(b, n.Child("Name"))
	b = append(b, ' ')
	return appendSym(b, n.Child("Mechanism"))
}

// appendIterations writes a SCRAM credential's iterations: " (4096 iterations)".
func appendIterations(b []byte, n *Node) []byte {
	it, ok := num(n, "Iterations")
	if !ok {
		return b
	}
	b = append(b, " ("...)
	b = appendPlural(b, it, "iteration")
	return append(b, ')')
}

// principalOf joins a principal's type and name ("User:alice").
func principalOf(n *Node, typ, name string) (string, bool) {
	t, ok1 := str(n, typ)
	s, ok2 := str(n, name)
	if !ok1 || !ok2 {
		return "", false
	}
	return t + ":" + s, true
}

// appendPeriod writes "label N ms" for a duration that is set (-1 asks
// for the broker's default).
func appendPeriod(b []byte, head int, n *Node, name, label string) []byte {
	ms, ok := num(n, name)
	if !ok || ms < 0 {
		return b
	}
	b = sep(b, head)
	b = append(b, label...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, ms, 10)
	return append(b, " ms"...)
}

// appendExpiry writes when a token expires, from a response that did not
// fail (a failed one says 0 or -1).
func appendExpiry(b []byte, head int, body *Node) []byte {
	ms, ok := num(body, "ExpiryTimestampMs")
	if code, _ := num(body, "ErrorCode"); !ok || code != 0 || ms <= 0 {
		return b
	}
	b = sep(b, head)
	b = append(b, "expires "...)
	return time.UnixMilli(ms).UTC().AppendFormat(b, time.RFC3339Nano)
}

// appendFlag writes label when a bool child is true.
func appendFlag(b []byte, head int, n *Node, name, label string) []byte {
	if v, ok := num(n, name); ok && v != 0 {
		b = sep(b, head)
		b = append(b, label...)
	}
	return b
}

// appendStr writes a string value clipped and escaped: "null" for null,
// "<redacted>" for a secret, "?" when the frame does not hold it.
func appendStr(b []byte, n *Node) []byte {
	switch {
	case n == nil || !n.HasValue():
		return append(b, '?')
	case n.redact != 0:
		return append(b, "<redacted>"...)
	case n.Null:
		return append(b, "null"...)
	case n.Str == "":
		return append(b, `""`...)
	}
	return appendClipped(b, n.Str)
}

// appendFloat writes a float64 value as Kafka's quotas are written: 1048576, 0.5.
func appendFloat(b []byte, n *Node) []byte {
	if n == nil || !n.HasValue() || n.Kind != KindFloat {
		return append(b, '?')
	}
	if f := n.Float; f > -1e15 && f < 1e15 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, n.Float, 'g', -1, 64)
}
