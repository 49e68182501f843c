/* ldap/filter.h — LDAP search filters (RFC 4511 §4.5.1), kept as BER.
 *
 * A decoded SearchRequest carries its Filter as the raw, validated TLV
 * (struct lfe_search_req.filter). These functions walk that TLV directly:
 * no tree is built, nothing is allocated.
 *
 * Work bounds. lfe_filter_validate() (run once per request, by
 * lfe_ldap_decode()) refuses with -E2BIG a filter nested deeper than
 * LFE_LDAP_MAX_FILTER_DEPTH, with more than LFE_LDAP_MAX_FILTER_NODES nodes,
 * more than LFE_LDAP_MAX_SUB_PIECES pieces in one substrings item or more
 * than LFE_LDAP_MAX_FILTER_PIECES pieces in all. Evaluation does not
 * validate again (it runs once per candidate entry): it trusts nothing
 * either — every read goes through a bounds-checked cursor, nesting is
 * bounded again, and a malformed filter gives a negative errno — but it
 * does not re-check the grammar or the caps. lfe_filter_eval_budget()
 * charges each unit of work to a caller's budget so a search over many
 * candidates can be cut off.
 *
 * Secrets. Every filter item on a secret attribute (attr.h:
 * userPassword, authPassword, by name or OID, with any option) is
 * Undefined, whatever the entry holds: equality, substrings, ordering,
 * presence, approx and extensible match alike; the value provider is never
 * asked for them. An extensible match without a type never looks at any
 * value (it is Undefined), so it cannot reach a secret either.
 */
#ifndef LFE_LDAP_FILTER_H
#define LFE_LDAP_FILTER_H

#include "ldap/bytes.h"

/* Limits the decoder (msg.c) enforces on a SearchRequest's filter. */
#define LFE_LDAP_MAX_FILTER_DEPTH 32u
#define LFE_LDAP_MAX_FILTER_NODES 256u
#define LFE_LDAP_MAX_SUB_PIECES   16u   /* pieces of one substrings item */
#define LFE_LDAP_MAX_FILTER_PIECES 64u  /* substring pieces in one filter */

/* Check a complete Filter TLV of exactly len bytes against the full grammar
 * (and, or, not, equalityMatch, substrings, greaterOrEqual, lessOrEqual,
 * present, approxMatch, extensibleMatch). 0, -EBADMSG or -E2BIG. */
int lfe_filter_validate(const uint8_t *f, size_t len);

/* Values of one attribute of the candidate entry, a window at a time.
 * Write the values first, first+1, ... (at most cap of them, fewer when the
 * attribute has fewer) to vals and return how many values the attribute
 * has in all (0 when the entry lacks it); the evaluator asks for the next
 * window with first += cap until it has seen every value, so an attribute
 * of any size is compared whole, in a fixed amount of stack. A provider
 * asked for windows in order can continue where the last one ended.
 * Return LFE_FILTER_HIDDEN when the caller may not test this attribute (an
 * access policy): every item on it is then Undefined, as if it were secret.
 * The provider compares type with lfe_attr_type_eq() (attr.h). */
#define LFE_FILTER_HIDDEN UINT32_MAX
typedef uint32_t (*lfe_filter_attr_fn)(void *ctx, struct lfe_bytes type, uint32_t first,
				       struct lfe_bytes *vals, uint32_t cap);

enum lfe_filter_result { LFE_FILTER_FALSE = 0, LFE_FILTER_TRUE = 1, LFE_FILTER_UNDEFINED = 2 };

/* Evaluate a filter (validated once, at decode) against one entry
 * (three-valued logic of RFC 4511 §4.5.1.7). Matching is case-insensitive
 * for the case-ignore attributes listed in dn.c and exact otherwise.
 * Returns an enum lfe_filter_result, or a negative errno (-EBADMSG, -E2BIG)
 * if f is malformed. */
int lfe_filter_eval(const uint8_t *f, size_t len, lfe_filter_attr_fn get, void *ctx);

/* lfe_filter_eval() charging its work to *work: one unit per filter node
 * visited, and for each value compared one unit plus the bytes of the value
 * it examines (per piece for substrings). Every value of an attribute is
 * compared (there is no cap on values: the budget is the bound). When
 * *work would drop below zero the evaluation stops, *work is 0 and the
 * result is -ETIME: the caller must then say so (adminLimitExceeded),
 * never treat the entry as not matching. The same
 * budget can be passed for every candidate of one request. work == NULL:
 * unbounded (lfe_filter_eval). */
int lfe_filter_eval_budget(const uint8_t *f, size_t len, lfe_filter_attr_fn get, void *ctx,
			   uint64_t *work);

/* RFC 4515 string form, NUL-terminated. Returns the string length or
 * -ENOSPC / -EBADMSG. Used by tests, logs and ldapfectl. */
ssize_t lfe_filter_to_string(const uint8_t *f, size_t len, char *out, size_t cap);

/* Index helper: if f is an equalityMatch on attribute type `attr`
 * (lfe_attr_type_eq), or an AND that contains one at its top level, return
 * 1 and the asserted value; else 0. Negative errno if what it walks of f is
 * malformed (f is not validated again). Never 1 for a secret attribute. */
int lfe_filter_find_eq(const uint8_t *f, size_t len, const char *attr,
		       struct lfe_bytes *value);

/* The planner's view: the equalityMatch items of f (f itself, or the
 * items at the top level of an AND), up to cap, in order, secret types
 * left out. Returns how many, or a negative errno as above. */
int lfe_filter_eq_items(const uint8_t *f, size_t len, struct lfe_bytes *types,
			struct lfe_bytes *vals, unsigned cap);

/* The planner's view of f's items it can ask an index about: f itself, or
 * the items at the top level of an AND, that are equalityMatch (type,
 * value), present (type) or substrings (type, subs: the pieces' encoding,
 * read with lfe_filter_sub_next), up to cap, in order, secret types left
 * out. Returns how many, or a negative errno as above. */
enum { LFE_FITEM_EQ, LFE_FITEM_PRES, LFE_FITEM_SUB };
struct lfe_filter_item {
	int kind;
	struct lfe_bytes type, value, subs;
};
int lfe_filter_plan_items(const uint8_t *f, size_t len, struct lfe_filter_item *items,
			  unsigned cap);

/* The next piece of subs (advanced past it): 1 with *where 0 initial,
 * 1 any, 2 final; 0 at the end; negative errno when malformed. */
int lfe_filter_sub_next(struct lfe_bytes *subs, int *where, struct lfe_bytes *piece);


#endif
