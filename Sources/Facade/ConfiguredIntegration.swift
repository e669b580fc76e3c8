import Foundation
import SegmentsDomain
import SegmentsData
import SegmentsNetworking
import SegmentsPersistence

/// One configuration resolved and validated before anything changes: the engine's ports for it,
/// what its tracking pipeline is built from, and the claim of its storage folder.
///
/// The stores are resolved as one ``SegmentsClient/Options/CustomStores`` whatever the storage
/// (files, memory or the app's own), then split: the customer and baseline stores go into
/// ``ports``, the event queue to the pipeline.
struct ConfiguredIntegration {
    /// The engine's ports, all but ``SegmentationEngine/Ports/tracking``: the client builds the
    /// pipeline from ``uploader`` and ``events`` (it reports uploads to the engine) and sets it.
    /// Configuring another integration, or the same one on other storage, reloads listeners
    /// (<doc:Behaviour#T2>); the folder's previous owner in this process hands over its customer, and
    /// the end of the configuration hands the folder on (<doc:Behaviour#P5>, <doc:Behaviour#R1>).
    var ports: SegmentationEngine.Ports
    /// Uploads tracked items: the backend's uploader, or a discarding one for ODP.
    let uploader: any EventUploader
    /// The events and customer updates waiting for upload.
    let events: any EventQueueStore
    /// The claim of the storage folder: its owner lock, held while configured (<doc:Behaviour#P5>),
    /// and what its previous owner handed over; `nil` without files.
    let claim: FileStoreRegistry.Claim?

    init(
        _ configuration: SegmentsClient.Configuration, options: SegmentsClient.Options, owner: AnyObject,
        client: ClientPorts
    ) throws {
        try options.validate()
        let transport = SegmentsMiddlewareTransport(transport: options.transport, middlewares: options.middlewares)
        let repository: any SegmentRepository
        switch configuration.backend {
        case .bloomreach(let bloomreach):
            try bloomreach.validate()
            repository = BloomreachSegmentRepository(
                configuration: bloomreach, transport: transport, scheduler: client.runtime.scheduler, clock: client.runtime.clock,
                logger: client.runtime.logger)
            uploader = BloomreachEventUploader(
                configuration: bloomreach, transport: transport, scheduler: client.runtime.scheduler, clock: client.runtime.clock,
                logger: client.runtime.logger)
        case .odp(let odp, let candidates, let category):
            try odp.validate()
            repository = ODPAudienceRepository(
                configuration: odp, transport: transport, clock: client.runtime.clock, candidates: candidates,
                category: category, logger: client.runtime.logger)
            uploader = DiscardingEventUploader(logger: client.runtime.logger)
        case .custom(let id, let customRepository, let customUploader):
            guard !id.isEmpty else { throw SegmentsError(.invalidConfiguration, "The integration id is empty") }
            repository = customRepository
            uploader = customUploader
        }
        if configuration.namesFlushingMode { try configuration.flushingMode.validate() }
        let endpoint: String
        switch configuration.backend {
        case .bloomreach(let bloomreach): endpoint = bloomreach.baseURL
        case .odp(let odp, _, let category): endpoint = "\(odp.apiHost) \(category.name)"
        case .custom: endpoint = ""
        }

        let stores: SegmentsClient.Options.CustomStores
        // Names where the customer is stored; `nil` in memory, where every configure is new storage.
        let storageID: String?
        switch options.storage {
        case .directory(let directory):
            let backend = configuration.backend
            let folder = directory ?? StorageLocation.defaultDirectory(integrationId: backend.storageIntegrationId)
            if directory == nil {
                if let legacyIntegrationId = backend.legacyStorageIntegrationId {
                    // Named by the rule of the version that made it (before the case rule).
                    Self.moveKeyNamedFolder(
                        StorageLocation.earlierDefaultDirectory(integrationId: legacyIntegrationId), to: folder,
                        logger: client.runtime.logger)
                }
                Self.moveEarlierFolder(integrationId: backend.storageIntegrationId, logger: client.runtime.logger)
            }
            let claim = try FileStoreRegistry.claim(
                folder, for: owner, queue: client.storageQueue, logger: client.runtime.logger, capacity: options.eventQueueCapacity,
                protectedData: options.protectedData)
            if claim.previousWrites == nil {
                // The customer file the engine reads next (answered from memory then): one the
                // system refuses while protected data is available fails the configure, rather
                // than a new customer be made beside it (see Behaviour P8). Not while a previous
                // owner's saves may still be queued: the engine takes its customer from memory.
                do {
                    try claim.stores.customer.checkReadable()
                } catch {
                    FileStoreRegistry.withdraw(claim)
                    throw error
                }
            }
            stores = .init(customer: claim.stores.customer, baseline: claim.stores.baseline, events: claim.stores.events)
            self.claim = claim
            storageID = "directory " + folder.standardizedFileURL.path
        case .inMemory:
            stores = .init(customer: InMemoryCustomerStore(), baseline: InMemorySegmentBaselineStore(), events: InMemoryEventQueueStore())
            claim = nil
            storageID = nil
        case .custom(let custom):
            stores = custom
            claim = nil
            storageID = "custom stores"
        }
        events = stores.events
        ports = SegmentationEngine.Ports(
            repository: repository, customerStore: stores.customer, baselineStore: stores.baseline,
            // A digest of backend and base URL (see Behaviour T2, D1), never of the storage folder,
            // whose path changes when iOS moves an app's container.
            integrationID: StorageLocation.integrationDigest(configuration.backend.storageIntegrationId + " | " + endpoint),
            storageID: storageID, handedOverCustomer: claim?.previousCustomer,
            handOver: claim.map { FileStoreRegistry.HandOver($0, storageQueue: client.storageQueue) },
            refusedStorageRedo: claim.map { FileStorageRedo(stores: $0.stores, lock: $0.lock, logger: client.runtime.logger) },
            eraser: StoresErasure(
                customer: stores.customer, baseline: stores.baseline, events: stores.events, logger: client.runtime.logger))
    }
}

extension ConfiguredIntegration {
    /// Renames the folder an older version named after the API key (<doc:Behaviour#P4>), under its
    /// owner lock (<doc:Behaviour#P5>), and says what happened. The lines name no folder: the old
    /// name is the key.
    static func moveKeyNamedFolder(_ legacy: URL, to folder: URL, logger: any SegmentsLogger) {
        switch StorageLocation.moveLegacyFolder(legacy, to: folder) {
        case .nothingToMove, .setAside:
            break
        case .moved:
            logger.log(.verbose, "Segments: Storage folder named after the API key renamed to its hashed name")
        case .earlierFolderInUse:
            logger.log(
                .warning,
                "Segments: The storage folder named after the API key is in use by another process; it is left as it is and renamed at a later configure")
        case .failed(let code):
            logger.log(.warning, "Segments: The storage folder named after the API key could not be renamed (errno \(code))")
        }
    }

    /// Moves the default folder an earlier version gave the integration under another name (before
    /// the case rule; <doc:Behaviour#P10>) to its current name, and says what happened. The log lines
    /// name no folder: its name carries the integration id.
    static func moveEarlierFolder(integrationId: String, logger: any SegmentsLogger) {
        switch StorageLocation.moveEarlierFolder(integrationId: integrationId, in: StorageLocation.defaultParentDirectory()) {
        case .nothingToMove:
            break
        case .moved:
            logger.log(.verbose, "Segments: Storage folder renamed to its case-safe name")
        case .setAside:
            logger.log(
                .warning,
                "Segments: Storage folders under the earlier and the case-safe name both existed; the case-safe one is used, the earlier one was renamed with the suffix \(StorageLocation.setAsideSuffix)")
        case .earlierFolderInUse:
            logger.log(
                .warning,
                "Segments: The storage folder under its earlier name is in use by another process; it is left as it is and moved at a later configure")
        case .failed(let code):
            logger.log(.warning, "Segments: The storage folder under its earlier name could not be renamed (errno \(code))")
        }
    }
}
