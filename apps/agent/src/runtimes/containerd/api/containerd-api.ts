import path from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { ContentWriteError, ContentWriter } from "./content-writer.ts";

// containerd's own gRPC API, spoken from the agent's process (issue 22, part 4): each call is a
// request on one HTTP/2 connection to the socket instead of a `ctr` process (a Go binary that
// starts, dials the same socket, makes the same call and exits: 10–20 ms each). Client:
// @grpc/grpc-js, the gRPC project's own Node implementation, with @grpc/proto-loader reading
// containerd's published .proto files (vendored under ./proto from
// github.com/containerd/containerd/api v1.8.0, Apache-2.0; the v1 services are wire-compatible
// with the containerd 1.6 that Debian ships and the GPU hosts run).

const PROTO_ROOT = fileURLToPath(new URL("./proto", import.meta.url));
const API = "github.com/containerd/containerd/api";
const PROTO_FILES = [
  "services/content/v1/content.proto",
  "services/images/v1/images.proto",
  "services/snapshots/v1/snapshots.proto",
  "services/diff/v1/diff.proto",
  "services/leases/v1/leases.proto",
  "services/tasks/v1/tasks.proto",
  "services/containers/v1/containers.proto",
].map((f) => path.join(API, f));

export interface Descriptor {
  media_type: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

export interface Mount {
  type: string;
  source: string;
  target?: string;
  options: string[];
}

/** containerd's task states (types/task/task.proto), as the agent's TaskStatus names them. */
export type ApiTaskStatus = "UNKNOWN" | "CREATED" | "RUNNING" | "STOPPED" | "PAUSED" | "PAUSING";

/** A call containerd answered with an error: its gRPC code name and containerd's own words. */
export class ContainerdApiError extends Error {
  constructor(
    readonly method: string,
    readonly code: string,
    readonly details: string,
  ) {
    super(`containerd ${method}: ${details || code}`);
    this.name = "ContainerdApiError";
  }
  get notFound(): boolean {
    return this.code === "NOT_FOUND";
  }
  get alreadyExists(): boolean {
    return this.code === "ALREADY_EXISTS";
  }
}

type GrpcClient = grpc.Client & Record<string, unknown>;
type ServiceCtor = new (
  target: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => GrpcClient;

export type ContainerdServiceMethod = grpc.MethodDefinition<object, object>;
type Service = ServiceCtor & {
  service: Record<string, ContainerdServiceMethod> & grpc.ServiceDefinition;
};
let services: Record<string, Service> | undefined;
/** The service constructors, from the .proto files (parsed once per process, ~50 ms). */
export function containerdServices(): Record<string, Service> {
  if (services) return services;
  const definition = protoLoader.loadSync(PROTO_FILES, {
    includeDirs: [PROTO_ROOT],
    keepCase: true,
    // Sizes and offsets are int64: Number holds every size below 8 PiB exactly.
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const root = grpc.loadPackageDefinition(definition) as unknown as {
    containerd: { services: Record<string, { v1: Record<string, Service> }> };
  };
  const s = root.containerd.services;
  services = {
    Content: s.content!.v1.Content!,
    Images: s.images!.v1.Images!,
    Snapshots: s.snapshots!.v1.Snapshots!,
    Diff: s.diff!.v1.Diff!,
    Leases: s.leases!.v1.Leases!,
    Tasks: s.tasks!.v1.Tasks!,
    Containers: s.containers!.v1.Containers!,
  };
  return services;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Resources written under this lease are kept from containerd's GC until it is deleted. */
  lease?: string;
  timeoutMs?: number;
}

/** One containerd namespace over one socket. */
export class ContainerdApi {
  private readonly clients = new Map<string, GrpcClient>();
  private readonly target: string;
  private readonly socketPath: string;
  private writer: ContentWriter | undefined;

  constructor(
    /** containerd's gRPC socket (an absolute path). */
    address: string,
    readonly namespace: string,
    private readonly defaultTimeoutMs = 30_000,
  ) {
    this.socketPath = path.resolve(address);
    this.target = `unix://${this.socketPath}`;
  }

  private client(service: string): GrpcClient {
    let client = this.clients.get(service);
    if (!client) {
      const Ctor = containerdServices()[service];
      if (!Ctor) throw new Error(`containerd API: no service ${service}`);
      // The clients share one connection: grpc-js pools subchannels by target and options.
      client = new Ctor(this.target, grpc.credentials.createInsecure(), {
        "grpc.max_receive_message_length": 64 * 1024 * 1024,
      });
      this.clients.set(service, client);
    }
    return client;
  }

  private metadata(o: CallOptions): grpc.Metadata {
    const m = new grpc.Metadata();
    m.set("containerd-namespace", this.namespace);
    if (o.lease) m.set("containerd-lease", o.lease);
    return m;
  }

  private callOptions(o: CallOptions): grpc.CallOptions {
    return { deadline: Date.now() + (o.timeoutMs ?? this.defaultTimeoutMs) };
  }

  /** One unary call: `Service.Method(request)`. */
  unary<Res>(service: string, method: string, request: object, o: CallOptions = {}): Promise<Res> {
    const client = this.client(service);
    const fn = client[method] as
      | ((
          req: object,
          md: grpc.Metadata,
          opts: grpc.CallOptions,
          cb: (err: grpc.ServiceError | null, res: Res) => void,
        ) => grpc.ClientUnaryCall)
      | undefined;
    if (!fn) throw new Error(`containerd API: no method ${service}.${method}`);
    return new Promise<Res>((resolve, reject) => {
      o.signal?.throwIfAborted();
      const call = fn.call(
        client,
        request,
        this.metadata(o),
        this.callOptions(o),
        (err: grpc.ServiceError | null, res: Res) => {
          o.signal?.removeEventListener("abort", cancel);
          if (err) reject(apiError(`${service}.${method}`, err));
          else resolve(res);
        },
      );
      const cancel = () => call.cancel();
      o.signal?.addEventListener("abort", cancel, { once: true });
    });
  }

  /** Content.Read as one buffer (manifests and configs: small). */
  async readContent(digest: string, o: CallOptions = {}): Promise<Buffer> {
    const client = this.client("Content");
    const read = client.Read as (
      req: object,
      md: grpc.Metadata,
      opts: grpc.CallOptions,
    ) => grpc.ClientReadableStream<{ offset: number; data: Buffer }>;
    const stream = read.call(client, { digest, offset: 0, size: 0 }, this.metadata(o), {
      ...this.callOptions(o),
    });
    const cancel = () => stream.cancel();
    o.signal?.addEventListener("abort", cancel, { once: true });
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stream as AsyncIterable<{ data: Buffer }>) chunks.push(chunk.data);
    } catch (error) {
      throw apiError("Content.Read", error as grpc.ServiceError);
    } finally {
      o.signal?.removeEventListener("abort", cancel);
    }
    return Buffer.concat(chunks);
  }

  /**
   * Content.Write: streams `data` into the content store under `ref` and commits it as
   * `expected` (containerd checks digest and size). A blob another writer committed first is
   * not an error: the store holds it either way.
   */
  async writeContent(
    ref: string,
    expected: { digest: string; size: number },
    data: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    labels: Record<string, string>,
    o: CallOptions = {},
  ): Promise<void> {
    this.writer ??= new ContentWriter(
      this.socketPath,
      containerdServices().Content!.service.Write!,
    );
    try {
      const last = await this.writer.write(
        {
          "containerd-namespace": this.namespace,
          ...(o.lease ? { "containerd-lease": o.lease } : {}),
        },
        ref,
        expected,
        data,
        labels,
        {
          ...(o.signal ? { signal: o.signal } : {}),
          timeoutMs: o.timeoutMs ?? this.defaultTimeoutMs,
        },
      );
      if (last?.digest && last.digest !== expected.digest) {
        throw new Error(`containerd stored ${last.digest} for ${expected.digest}`);
      }
    } catch (error) {
      if (error instanceof ContentWriteError) {
        const code = grpc.status[error.code] ?? String(error.code);
        // Another writer committed the blob first: the store holds it either way.
        if (code === "ALREADY_EXISTS") return;
        throw new ContainerdApiError("Content.Write", code, error.details);
      }
      throw error;
    }
  }

  // --- typed calls the pull path makes ------------------------------------------------------

  async contentInfo(
    digest: string,
    o: CallOptions = {},
  ): Promise<{ size: number; labels: Record<string, string> } | undefined> {
    return this.unary<{ info: { size: number; labels: Record<string, string> } }>(
      "Content",
      "Info",
      { digest },
      o,
    ).then((r) => r.info, orUndefinedIfNotFound);
  }

  /** Sets these labels on a blob, leaving its others as they are. */
  async labelContent(digest: string, labels: Record<string, string>, o: CallOptions = {}) {
    await this.unary(
      "Content",
      "Update",
      {
        info: { digest, labels },
        update_mask: { paths: Object.keys(labels).map((k) => `labels.${k}`) },
      },
      o,
    );
  }

  async image(name: string, o: CallOptions = {}): Promise<{ target: Descriptor } | undefined> {
    return this.unary<{ image: { target: Descriptor } }>("Images", "Get", { name }, o).then(
      (r) => r.image,
      orUndefinedIfNotFound,
    );
  }

  /** Creates the image record, or points an existing one at `target`. */
  async putImage(name: string, target: Descriptor, o: CallOptions = {}): Promise<void> {
    const image = { name, target, labels: {} };
    try {
      await this.unary("Images", "Create", { image }, o);
    } catch (error) {
      if (!(error instanceof ContainerdApiError && error.alreadyExists)) throw error;
      await this.unary("Images", "Update", { image, update_mask: { paths: ["target"] } }, o);
    }
  }

  async snapshotExists(snapshotter: string, key: string, o: CallOptions = {}): Promise<boolean> {
    return this.unary("Snapshots", "Stat", { snapshotter, key }, o).then(
      () => true,
      (error: unknown) => orUndefinedIfNotFound(error) ?? false,
    );
  }

  async prepareSnapshot(
    snapshotter: string,
    key: string,
    parent: string,
    labels: Record<string, string>,
    o: CallOptions = {},
  ): Promise<Mount[]> {
    const r = await this.unary<{ mounts: Mount[] }>(
      "Snapshots",
      "Prepare",
      { snapshotter, key, parent, labels },
      o,
    );
    return r.mounts;
  }

  async commitSnapshot(
    snapshotter: string,
    name: string,
    key: string,
    labels: Record<string, string>,
    o: CallOptions = {},
  ): Promise<void> {
    await this.unary("Snapshots", "Commit", { snapshotter, name, key, labels }, o);
  }

  async removeSnapshot(snapshotter: string, key: string, o: CallOptions = {}): Promise<void> {
    await this.unary("Snapshots", "Remove", { snapshotter, key }, o);
  }

  async snapshotMounts(snapshotter: string, key: string, o: CallOptions = {}): Promise<Mount[]> {
    const r = await this.unary<{ mounts: Mount[] }>("Snapshots", "Mounts", { snapshotter, key }, o);
    return r.mounts;
  }

  /** Diff.Apply: unpacks a layer blob onto the mounts; answers the uncompressed digest. */
  async applyLayer(layer: Descriptor, mounts: Mount[], o: CallOptions = {}): Promise<Descriptor> {
    const r = await this.unary<{ applied: Descriptor }>(
      "Diff",
      "Apply",
      { diff: layer, mounts },
      o,
    );
    return r.applied;
  }

  /** A lease that expires by itself: a pull killed midway leaves nothing held for long. */
  async createLease(id: string, expiresInSeconds: number, o: CallOptions = {}): Promise<void> {
    const expire = new Date(Date.now() + expiresInSeconds * 1000).toISOString();
    await this.unary("Leases", "Create", { id, labels: { "containerd.io/gc.expire": expire } }, o);
  }

  async deleteLease(id: string, o: CallOptions = {}): Promise<void> {
    await this.unary("Leases", "Delete", { id, sync: false }, o);
  }

  async container(
    id: string,
    o: CallOptions = {},
  ): Promise<{ snapshotter: string; snapshot_key: string } | undefined> {
    return this.unary<{ container: { snapshotter: string; snapshot_key: string } }>(
      "Containers",
      "Get",
      { id },
      o,
    ).then((r) => r.container, orUndefinedIfNotFound);
  }

  /** Creates the container's task (rootfs from its snapshot, stdout/stderr to `logUri`). */
  async createTask(
    containerId: string,
    rootfs: Mount[],
    logUri: string,
    o: CallOptions = {},
  ): Promise<number> {
    const r = await this.unary<{ pid: number }>(
      "Tasks",
      "Create",
      { container_id: containerId, rootfs, stdout: logUri, stderr: logUri },
      o,
    );
    return r.pid;
  }

  async startTask(containerId: string, o: CallOptions = {}): Promise<void> {
    await this.unary("Tasks", "Start", { container_id: containerId }, o);
  }

  async taskStatus(containerId: string, o: CallOptions = {}): Promise<ApiTaskStatus | undefined> {
    return this.unary<{ process: { status: ApiTaskStatus } }>(
      "Tasks",
      "Get",
      { container_id: containerId },
      o,
    ).then((r) => r.process.status, orUndefinedIfNotFound);
  }

  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
    this.writer?.close();
  }
}

function orUndefinedIfNotFound(error: unknown): undefined {
  if (error instanceof ContainerdApiError && error.notFound) return undefined;
  throw error;
}

function apiError(method: string, err: grpc.ServiceError): Error {
  if (typeof err?.code !== "number") return err;
  const code = grpc.status[err.code] ?? String(err.code);
  return new ContainerdApiError(method, code, err.details ?? err.message);
}
