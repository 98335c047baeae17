import { appendFile, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { containerdServices } from "../api/containerd-api.ts";

// The containerd API side of the fake tools (fake-tools.ts) for unit tests: a gRPC server on a
// unix socket that answers the calls the pull path makes (api/api-pull.ts, the task start), and
// a fetch that serves the images the fake tools publish as a registry would. It keeps its state
// in the fake tools' own state files (tasks/, containers/, images.txt, content.txt), so a task
// it starts is one `ctr tasks ls` lists, and it logs each call to calls.log as
// `api <Service.Method> <key>` beside the tools' calls. `failWhen("api", match, message)` makes a
// call whose `Service.Method key` contains `match` fail with that message.

type Callback = (error: Partial<grpc.ServiceError> | null, value?: object) => void;
type Unary = (call: { request: Record<string, unknown> }, callback: Callback) => void;

export interface FakeContainerdApi {
  socket: string;
  close(): Promise<void>;
}

const STATUS_BY_NAME: Record<string, number> = {
  NOT_FOUND: grpc.status.NOT_FOUND,
  ALREADY_EXISTS: grpc.status.ALREADY_EXISTS,
};

export async function startFakeContainerdApi(
  state: string,
  env: NodeJS.ProcessEnv,
): Promise<FakeContainerdApi> {
  const socket = path.join(state, "containerd-api.sock");
  const content = new Map<
    string,
    { size: number; labels: Record<string, string>; data?: Buffer }
  >();
  const snapshots = new Set<string>();
  const file = (...parts: string[]) => path.join(state, ...parts);
  const read = (p: string) => readFile(p, "utf8").catch(() => undefined);
  const pid = Number((env.FAKE_PIDS ?? "4242").split(" ")[0]);

  const log = async (method: string, key: string) => {
    await appendFile(file("calls.log"), `api\t${method}\t${key}\n`);
    for (const line of ((await read(file("fail"))) ?? "").split("\n")) {
      const [tool, match, message] = line.split("\t");
      if (tool === "api" && match && `${method} ${key}`.includes(match)) {
        throw Object.assign(new Error(message), { code: grpc.status.UNKNOWN, details: message });
      }
    }
  };
  const fail = (name: keyof typeof STATUS_BY_NAME, details: string) =>
    Object.assign(new Error(details), { code: STATUS_BY_NAME[name], details });
  const unary =
    <R>(method: string, key: (r: R) => string, answer: (r: R) => object | Promise<object>): Unary =>
    (call, callback) => {
      const request = call.request as R;
      void (async () => {
        await log(method, key(request));
        return answer(request);
      })().then(
        (value) => callback(null, value),
        (error: Partial<grpc.ServiceError>) => callback(error),
      );
    };

  const images = async () => ((await read(file("images.txt"))) ?? "").split("\n").filter(Boolean);
  const taskStatus = async (id: string) => (await read(file("tasks", id)))?.trim();

  const server = new grpc.Server();
  const services = containerdServices();
  server.addService(services.Leases!.service, {
    Create: unary(
      "Leases.Create",
      () => "",
      (r: { id: string }) => ({ lease: { id: r.id } }),
    ),
    Delete: unary(
      "Leases.Delete",
      () => "",
      () => ({}),
    ),
  });
  server.addService(services.Content!.service, {
    Info: unary(
      "Content.Info",
      (r) => String(r.digest),
      (r: { digest: string }) => {
        const held = content.get(r.digest);
        if (!held) throw fail("NOT_FOUND", `content digest ${r.digest}: not found`);
        return { info: { digest: r.digest, size: held.size, labels: held.labels } };
      },
    ),
    Update: unary(
      "Content.Update",
      (r) => String((r.info as { digest: string }).digest),
      (r: { info: { digest: string; labels: Record<string, string> } }) => {
        const held = content.get(r.info.digest);
        if (!held) throw fail("NOT_FOUND", `content digest ${r.info.digest}: not found`);
        Object.assign(held.labels, r.info.labels);
        return { info: { digest: r.info.digest, size: held.size, labels: held.labels } };
      },
    ),
    Read: (call: grpc.ServerWritableStream<{ digest: string }, object>) => {
      const digest = call.request.digest;
      void (async () => {
        const data = content.get(digest)?.data ?? (await readFile(file("blobs", digest)));
        call.write({ offset: 0, data });
        call.end();
      })().catch(() =>
        call.emit("error", fail("NOT_FOUND", `content digest ${digest}: not found`)),
      );
    },
    Write: (call: grpc.ServerDuplexStream<Record<string, never>, object>) => {
      let ref = "";
      let refused = false;
      const chunks: Buffer[] = [];
      let offset = 0;
      call.on(
        "data",
        (req: {
          action: string;
          ref: string;
          offset: number;
          data: Buffer;
          total: number;
          expected: string;
          labels: Record<string, string>;
        }) => {
          ref ||= req.ref;
          if (refused) return;
          if (req.action === "STAT" && content.has(req.expected)) {
            // As containerd does: the status at once, and nothing read after it.
            refused = true;
            call.emit(
              "error",
              fail("ALREADY_EXISTS", `blob with expected digest ${req.expected} exists`),
            );
            return;
          }
          if (req.data?.length) {
            chunks.push(Buffer.from(req.data));
            offset += req.data.length;
          }
          if (req.action === "COMMIT") {
            const data = Buffer.concat(chunks);
            content.set(req.expected, { size: req.total, labels: { ...req.labels }, data });
            void appendFile(file("calls.log"), `api\tContent.Write\t${req.expected}\n`);
            void appendFile(file("content.txt"), `${req.expected}\n`);
          }
          call.write({
            action: req.action,
            offset,
            digest: req.action === "COMMIT" ? req.expected : "",
          });
        },
      );
      call.on("end", () => {
        if (!refused) call.end();
      });
      call.on("error", () => undefined);
      void ref;
    },
  });
  server.addService(services.Images!.service, {
    Create: unary(
      "Images.Create",
      (r) => String((r.image as { name: string }).name),
      async (r: { image: { name: string; target: { digest: string } } }) => {
        if ((await images()).some((l) => l.startsWith(`${r.image.name} `))) {
          throw fail("ALREADY_EXISTS", `image "${r.image.name}": already exists`);
        }
        await appendFile(file("images.txt"), `${r.image.name} ${r.image.target.digest} -\n`);
        return { image: r.image };
      },
    ),
    Update: unary(
      "Images.Update",
      (r) => String((r.image as { name: string }).name),
      async (r: { image: { name: string; target: { digest: string } } }) => {
        const kept = (await images()).filter((l) => !l.startsWith(`${r.image.name} `));
        kept.push(`${r.image.name} ${r.image.target.digest} -`);
        await writeFile(file("images.txt"), `${kept.join("\n")}\n`);
        return { image: r.image };
      },
    ),
  });
  const mounts = (key: string) => [
    { type: "bind", source: `/fake/snapshots/${key}`, options: ["rbind"] },
  ];
  server.addService(services.Snapshots!.service, {
    Stat: unary(
      "Snapshots.Stat",
      (r) => String(r.key),
      (r: { key: string }) => {
        if (!snapshots.has(r.key)) throw fail("NOT_FOUND", `snapshot ${r.key}: not found`);
        return { info: { name: r.key, kind: "COMMITTED" } };
      },
    ),
    Prepare: unary(
      "Snapshots.Prepare",
      (r) => String(r.key),
      (r: { key: string }) => ({
        mounts: mounts(r.key),
      }),
    ),
    Commit: unary(
      "Snapshots.Commit",
      (r) => String(r.name),
      (r: { name: string }) => {
        snapshots.add(r.name);
        return {};
      },
    ),
    Remove: unary(
      "Snapshots.Remove",
      (r: { key: string }) => r.key,
      () => ({}),
    ),
    Mounts: unary(
      "Snapshots.Mounts",
      (r) => String(r.key),
      (r: { key: string }) => ({
        mounts: mounts(r.key),
      }),
    ),
  });
  server.addService(services.Diff!.service, {
    // Fake layers are "uncompressed": the diff ID the fake config lists is the layer's digest.
    Apply: unary(
      "Diff.Apply",
      (r) => String((r.diff as { digest: string }).digest),
      (r: { diff: { digest: string; size: number } }) => ({
        applied: {
          media_type: "application/vnd.oci.image.layer.v1.tar",
          digest: r.diff.digest,
          size: r.diff.size,
        },
      }),
    ),
  });
  server.addService(services.Containers!.service, {
    Get: unary(
      "Containers.Get",
      (r) => String(r.id),
      async (r: { id: string }) => {
        if ((await read(file("containers", r.id))) === undefined) {
          throw fail("NOT_FOUND", `container "${r.id}" in namespace "thaw": not found`);
        }
        return { container: { id: r.id, snapshotter: "overlayfs", snapshot_key: r.id } };
      },
    ),
  });
  server.addService(services.Tasks!.service, {
    Create: unary(
      "Tasks.Create",
      (r) => String(r.container_id),
      async (r: { container_id: string; stdout: string }) => {
        if ((await read(file("containers", r.container_id))) === undefined) {
          throw fail("NOT_FOUND", `container "${r.container_id}": not found`);
        }
        if (await taskStatus(r.container_id))
          throw fail("ALREADY_EXISTS", `task ${r.container_id}: already exists`);
        await writeFile(file("tasks", r.container_id), "CREATED\n");
        return { container_id: r.container_id, pid };
      },
    ),
    Start: unary(
      "Tasks.Start",
      (r) => String(r.container_id),
      async (r: { container_id: string }) => {
        await writeFile(
          file("tasks", r.container_id),
          env.FAKE_TASK_EXITS ? "STOPPED\n" : "RUNNING\n",
        );
        return { pid };
      },
    ),
    Get: unary(
      "Tasks.Get",
      (r) => String(r.container_id),
      async (r: { container_id: string }) => {
        const status = await taskStatus(r.container_id);
        if (!status) throw fail("NOT_FOUND", `task ${r.container_id}: not found`);
        return { process: { container_id: r.container_id, pid, status } };
      },
    ),
  });

  await rm(socket, { force: true });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (error) =>
      error ? reject(error) : resolve(),
    ),
  );
  return {
    socket,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1_000).unref();
      }),
  };
}

/**
 * A registry for the fake tools' published images, as a fetch: GET /v2/<repo>/manifests/<tag or
 * digest> answers the manifest `publish` stored for `<host>/<repo>:<tag>` (or the digest), and
 * GET /v2/<repo>/blobs/<digest> the stored blob, or an empty one (fake layers have no bytes).
 */
export function fakeRegistryFetch(state: string): typeof fetch {
  const json = (status: number, code: string) =>
    new Response(
      JSON.stringify({ errors: [{ code, message: code.toLowerCase().replace("_", " ") }] }),
      {
        status,
        statusText: status === 404 ? "Not Found" : "Error",
        headers: { "content-type": "application/json" },
      },
    );
  return (async (input: string | URL) => {
    const url = new URL(input);
    const match = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url.pathname);
    if (!match) return json(404, "NAME_UNKNOWN");
    const [, repo, kind, reference] = match as unknown as [string, string, string, string];
    const blob = (digest: string) =>
      readFile(path.join(state, "blobs", digest)).catch(() => undefined);
    if (kind === "blobs") {
      return new Response((await blob(reference)) ?? new Uint8Array(), { status: 200 });
    }
    let digest: string | undefined = reference.startsWith("sha256:") ? reference : undefined;
    if (!digest) {
      const registry = (await readFile(path.join(state, "registry.txt"), "utf8")).split("\n");
      digest = registry
        .find((l) => l.startsWith(`${url.host}/${repo}:${reference} `))
        ?.split(" ")[1];
    }
    const manifest = digest ? await blob(digest) : undefined;
    if (!manifest) return json(404, "MANIFEST_UNKNOWN");
    const mediaType =
      (JSON.parse(manifest.toString("utf8")) as { mediaType?: string }).mediaType ??
      "application/vnd.oci.image.manifest.v1+json";
    return new Response(manifest, { status: 200, headers: { "content-type": mediaType } });
  }) as typeof fetch;
}
