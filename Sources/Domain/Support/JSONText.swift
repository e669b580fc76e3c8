import Foundation

/// The one check every JSON text passes before a decoder sees it: UTF-8, and no deeper than a
/// limit (<doc:Behaviour#P7>, <doc:Behaviour#P9>).
///
/// Why the encoding matters: ``JSONDepth`` scans bytes as UTF-8, but Foundation's decoders
/// (`JSONDecoder`, `JSONSerialization`) recognise UTF-16 and UTF-32 by their zero bytes or a
/// byte-order mark and convert before parsing. In UTF-16LE the character U+0122 is the bytes
/// `22 01`: the scan takes the `22` for a quote and stops counting, while the decoder recurses
/// through hundreds of levels and overflows a 512 KiB stack. Refusing every other encoding first
/// makes the scan and the decoder read the same text.
///
/// The rule: a byte-order mark of UTF-16 or UTF-32, or a zero byte anywhere, means the text is not
/// UTF-8 JSON. A zero byte can never appear in valid UTF-8 JSON (control characters inside strings
/// must be escaped), and every UTF-16 or UTF-32 text of a JSON bracket or quote holds one. A UTF-8
/// byte-order mark is allowed: the text stays UTF-8, and neither the scan nor the decoders
/// convert it.
package enum JSONText {
    /// Why a text is refused before any parsing.
    package enum Refusal: Equatable, Sendable, CustomStringConvertible {
        /// The text is in another encoding than UTF-8; the name says which, as far as its first
        /// bytes tell (for example `UTF-16LE`).
        case notUTF8(encoding: String)
        /// Arrays and objects nest deeper than `limit` levels.
        case tooDeep(limit: Int)

        /// The reason as the clause of a sentence: "is UTF-16LE, not UTF-8" or "nests deeper than
        /// 64 levels".
        package var description: String {
            switch self {
            case .notUTF8(let encoding): "is \(encoding), not UTF-8"
            case .tooDeep(let limit): "nests deeper than \(limit) levels"
            }
        }
    }

    /// Why `data` must not reach a decoder, or `nil` when it may: UTF-8 and at most `depthLimit`
    /// levels deep. Two linear scans (a zero byte, then the nesting), no recursion.
    package static func refusal(of data: Data, depthLimit: Int = JSONDepth.maximum) -> Refusal? {
        if let encoding = foreignEncoding(of: data) { return .notUTF8(encoding: encoding) }
        if JSONDepth.exceeds(depthLimit, in: data) { return .tooDeep(limit: depthLimit) }
        return nil
    }

    /// The name of the encoding `data` is in when it is not UTF-8, or `nil`.
    package static func foreignEncoding(of data: Data) -> String? {
        data.withUnsafeBytes { bytes -> String? in
            let first = Array(bytes.prefix(4))
            func starts(with mark: [UInt8]) -> Bool { first.starts(with: mark) }
            // The longer marks first: UTF-32LE's begins with UTF-16LE's.
            if starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return "UTF-32BE" }
            if starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return "UTF-32LE" }
            if starts(with: [0xFE, 0xFF]) { return "UTF-16BE" }
            if starts(with: [0xFF, 0xFE]) { return "UTF-16LE" }
            guard bytes.contains(0) else { return nil }
            // Zero bytes without a mark: named by where they sit in the first four bytes, as
            // RFC 4627 tells the encodings apart; any other place is still not UTF-8.
            let zero = (first + [1, 1, 1, 1]).prefix(4).map { $0 == 0 }
            switch (zero[0], zero[1], zero[2], zero[3]) {
            case (true, true, true, false): return "UTF-32BE"
            case (false, true, true, true): return "UTF-32LE"
            case (true, false, _, _): return "UTF-16BE"
            case (false, true, _, _): return "UTF-16LE"
            default: return "text with zero bytes"
            }
        }
    }
}
