import Foundation

/// A queued item's properties as held in memory (<doc:Behaviour#P7>): the values an app tracked, or,
/// for an item read back from the event queue's file, the JSON text they were read from.
///
/// Why text: a tree of ``JSONValue`` takes many times the bytes of its JSON (an empty array is 3
/// bytes on disk and over 20 in a tree; a whole queue of such items took 12× its file), and a
/// queue read back from disk is mostly waiting to be uploaded. The text is the exact bytes the
/// journal's reader checked — a JSON object within the 64-level and 64 KiB rules of
/// ``ReplayableEvent`` — so writing it again copies it, and it is decoded only when the values are
/// asked for (an upload, one item at a time).
package enum StoredProperties: Sendable {
    /// The values themselves.
    case values([String: JSONValue])
    /// The JSON text of an object that ``JSONReader`` reads and ``ReplayableEvent`` accepts.
    case text([UInt8])

    /// The values; decodes text each time it is asked (text that does not hold an object, which
    /// the stores never keep, reads as no properties).
    package var values: [String: JSONValue] {
        switch self {
        case .values(let values):
            return values
        case .text(let text):
            let value = try? JSONReader.value(from: Data(text))
            guard case .object(let values)? = value else { return [:] }
            return values
        }
    }

    /// Whether both hold the same values (equal text is not decoded).
    static func == (lhs: StoredProperties, rhs: StoredProperties) -> Bool {
        if case .text(let left) = lhs, case .text(let right) = rhs, left == right { return true }
        return lhs.values == rhs.values
    }
}
