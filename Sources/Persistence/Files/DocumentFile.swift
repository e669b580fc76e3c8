import Foundation
import SegmentsDomain

/// One small JSON document in the storage directory, replaced whole on every save: the shared
/// mechanics of the customer and baseline stores.
///
/// Reading never throws: a missing file is `nil`; a damaged, wrong-shaped or newer-format file is
/// logged, set aside and read as `nil`, so the owner starts from its empty state and the next save
/// rebuilds the file (see Behaviour P2).
struct DocumentFile<Record: VersionedRecord>: Sendable {
    /// The directory holding the file.
    let directory: StorageDirectory
    /// The file's name.
    let name: String
    /// Where recovery is reported.
    let diagnostics: StoreDiagnostics

    /// The stored record, or `nil` when there is none or it is unusable.
    func read() -> Record? {
        do {
            try directory.create()
        } catch {
            diagnostics.unreadable(name, error: error)
            return nil
        }
        directory.removeStrayTemporaries(of: name)
        let data: Data
        do {
            guard let contents = try POSIXFile.contents(of: directory.path(of: name)) else {
                diagnostics.missing(name)
                return nil
            }
            data = contents
        } catch let untrusted as UntrustedFile {
            let asideName = directory.setAside(name)
            diagnostics.setAside(name, problem: .untrusted(untrusted), asideName: asideName, detail: nil)
            return nil
        } catch {
            diagnostics.unreadable(name, error: error)
            return nil
        }
        do throws(DecodeFailure) {
            return try VersionedJSON.decode(Record.self, from: data)
        } catch {
            let asideName = directory.setAside(name)
            diagnostics.setAside(name, problem: error.problem, asideName: asideName, detail: error.detail)
            return nil
        }
    }

    /// Replaces the stored record atomically.
    func write(_ record: Record) throws {
        try directory.create()
        try directory.replace(name, with: VersionedJSON.encode(record))
    }

    /// ``write(_:)``, and when it fails, deletes the stored record before throwing, so the old one
    /// can never be read again (after a restart it would bring back what the failed write replaced,
    /// e.g. a logged-out customer's hard ids). Deleting needs no free space, so it works on a full
    /// disk. Returns normally only when the write succeeded.
    ///
    /// - Throws: ``SegmentsError`` `.storage`, saying whether the old file was deleted.
    /// - Parameter deleted: called with whether the old file is gone, before the error is thrown.
    func writeOrDelete(_ record: Record, deleted: (Bool) -> Void) throws {
        do {
            try write(record)
        } catch {
            let gone = directory.remove(name)
            deleted(gone)
            let cause = SegmentsError.wrapping(error, as: .storage)
            let outcome = gone ? "the previous file was deleted" : "the previous file could not be deleted either"
            diagnostics.log(.error, "Could not save the \(diagnostics.subject) (\(cause.message)); \(outcome)")
            throw SegmentsError(.storage, "\(cause.message); \(outcome)", underlying: error)
        }
    }
}
