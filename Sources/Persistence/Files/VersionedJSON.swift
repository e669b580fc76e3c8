import Foundation
import SegmentsDomain

/// A record stored as versioned JSON: `{"version": 1, …}`.
protocol VersionedRecord: Codable {
    /// The format version this SDK writes and reads.
    static var currentVersion: Int { get }
    /// Whether every number of the record is within its documented range (<doc:Behaviour#P7>);
    /// a record with one out of range is unreadable, like a damaged one (P2). The version is
    /// checked by ``VersionedJSON/decode(_:from:)`` itself.
    var numbersAreInRange: Bool { get }
}

extension VersionedRecord {
    /// A record without numbers besides its version.
    var numbersAreInRange: Bool { true }
}

/// Decoding of versioned JSON that tells apart the ways a stored file can be unusable, so the
/// log says what happened (<doc:Behaviour#P2>).
enum VersionedJSON {
    /// The document read in one pass (<doc:Behaviour#P7>): its version first, so a newer format is
    /// recognised as such rather than reported as damage, then, from the same parse, the record.
    private struct Versioned<Record: VersionedRecord>: Decodable {
        enum Outcome {
            case record(Record)
            case otherVersion(Int)
        }

        private enum CodingKeys: String, CodingKey {
            case version
        }

        let outcome: Outcome

        init(from decoder: any Decoder) throws {
            let version = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .version)
            guard version == Record.currentVersion else {
                outcome = .otherVersion(version)
                return
            }
            outcome = .record(try Record(from: decoder))
        }
    }

    /// Decodes `data` as `Record`, or throws a ``StoredFileProblem`` paired with the decoder's
    /// detail. The text is parsed once (it was three times: a syntax check, a version probe and
    /// the record, so junk inside a valid document cost three parses).
    static func decode<Record: VersionedRecord>(_ type: Record.Type, from data: Data) throws(DecodeFailure) -> Record {
        guard !data.isEmpty else { throw DecodeFailure(problem: .empty, detail: nil) }
        // Before any parser: a planted, deeply nested file could overflow the stack, and one in
        // UTF-16 or UTF-32 would hide its depth from the scan (Foundation's decoders convert it).
        switch JSONText.refusal(of: data) {
        case .notUTF8(let encoding): throw DecodeFailure(problem: .notUTF8(encoding: encoding), detail: nil)
        case .tooDeep: throw DecodeFailure(problem: .wrongShape, detail: nil)
        case nil: break
        }
        let outcome: Versioned<Record>.Outcome
        do {
            outcome = try JSONDecoder().decode(Versioned<Record>.self, from: data).outcome
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            // What the decoder says of text that is not JSON at all (its parser's error is the
            // underlying one); a value of the wrong kind is a type mismatch instead.
            throw DecodeFailure(problem: .notJSON, detail: context.underlyingError ?? DecodingError.dataCorrupted(context))
        } catch {
            throw DecodeFailure(problem: .wrongShape, detail: error)
        }
        switch outcome {
        case .otherVersion(let version):
            if version > Record.currentVersion { throw DecodeFailure(problem: .futureVersion(version), detail: nil) }
            throw DecodeFailure(problem: .wrongShape, detail: nil)
        case .record(let record):
            guard record.numbersAreInRange else { throw DecodeFailure(problem: .wrongShape, detail: nil) }
            return record
        }
    }

    /// Encodes `record` compactly; keys are sorted so equal records give equal bytes.
    static func encode<Record: Encodable>(_ record: Record) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(record)
    }
}

/// Why decoding failed: the kind of damage, and the decoder's error for verbose logs.
struct DecodeFailure: Error {
    /// The kind of damage.
    let problem: StoredFileProblem
    /// The decoder's error, if it gave one.
    let detail: (any Error)?
}
