import Foundation
import SegmentsDomain

/// Checks the values the SDK puts into request headers (keys, tokens, the user agent).
///
/// A control character in a header value is never legitimate: CR or LF would split the header
/// (libcurl silently drops the whole header, so the request goes out unauthenticated and fails
/// with a confusing 401), and the others are refused by servers or proxies in their own ways. A
/// value with one is refused with `.invalidConfiguration` before anything is sent (<doc:Behaviour#P7>).
package enum HeaderValueRules {
    /// Throws when `value` contains a control character (Unicode category Cc: U+0000–U+001F, U+007F,
    /// U+0080–U+009F, tab included) or a line or paragraph separator (U+2028, U+2029). The message
    /// names `what`, never the value, which may be a credential (<doc:Behaviour#P4>).
    ///
    /// - Throws: ``SegmentsError`` `.invalidConfiguration`.
    package static func check(_ value: String, _ what: String) throws {
        if let forbidden = firstForbidden(in: value) {
            throw SegmentsError(.invalidConfiguration, "\(what) contains a control character (\(forbidden))")
        }
    }

    /// The first forbidden scalar of `value` as `U+000D`, or `nil` when there is none.
    package static func firstForbidden(in value: String) -> String? {
        guard let scalar = value.unicodeScalars.first(where: isForbidden) else { return nil }
        let code = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - code.count)) + code
    }

    /// Whether `scalar` may not appear in a header value.
    package static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
