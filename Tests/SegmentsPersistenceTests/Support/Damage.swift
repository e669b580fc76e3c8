import Foundation
import Testing

/// The ways a stored file can be unusable (see Behaviour P2), applied to a valid file's bytes.
enum Damage: String, CaseIterable, CustomTestStringConvertible {
    /// Zero bytes.
    case empty
    /// The first half of a valid file.
    case truncated
    /// Bytes that are not text, let alone JSON.
    case garbage
    /// Valid JSON of another structure.
    case wrongShape
    /// A valid file with a version from the future.
    case futureVersion

    var testDescription: String { rawValue }

    /// `valid` damaged this way.
    func apply(to valid: Data) -> Data {
        switch self {
        case .empty:
            return Data()
        case .truncated:
            return valid.prefix(valid.count / 2)
        case .garbage:
            return Data([0x00, 0xFF, 0xFE, 0x7B, 0x13, 0x80, 0x22, 0x0A, 0xC3, 0x28])
        case .wrongShape:
            return Data(#"{"hello":["world"],"count":3}"#.utf8)
        case .futureVersion:
            let text = String(decoding: valid, as: UTF8.self)
            return Data(text.replacingOccurrences(of: #""version":1"#, with: #""version":99"#).utf8)
        }
    }
}
