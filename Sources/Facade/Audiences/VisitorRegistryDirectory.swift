import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsPersistence

/// Hands out one visitor segments registry per storage directory in the process.
///
/// A registry keeps its visitors in memory and serializes read-change-save under its lock, so two
/// registries on one file would lose each other's updates. Clients that use the same directory
/// therefore share one registry (and one file store). Entries are weak: a registry ends with its
/// last client.
enum VisitorRegistryDirectory {
    private struct Entry: Sendable {
        weak var registry: VisitorSegmentsRegistry?
    }

    private static let entries = Locked<[String: Entry]>([:])

    /// The registry of `directory`, shared with any other live client of the same directory.
    static func registry(in directory: URL, logger: any SegmentsLogger) -> VisitorSegmentsRegistry {
        let key = directory.standardizedFileURL.resolvingSymlinksInPath().path
        return entries.withLock { entries in
            entries = entries.filter { $0.value.registry != nil }
            if let shared = entries[key]?.registry { return shared }
            let registry = VisitorSegmentsRegistry(
                store: FileVisitorSegmentsStore(directory: directory, logger: logger), logger: logger)
            entries[key] = Entry(registry: registry)
            return registry
        }
    }
}
