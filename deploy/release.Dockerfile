# syntax=docker/dockerfile:1
# The release's container image, multi-arch, from the very binaries in the
# release archives (make release builds them with GoReleaser into dist/):
#
#   make release VERSION=0.1.0
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     -f deploy/release.Dockerfile -t ghcr.io/hostrelay/hostrelay:0.1.0 --push dist
#
# The build context is dist/. Nothing is compiled here; the root Dockerfile,
# which builds from source, makes the same image for one platform.

FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETOS
ARG TARGETARCH
# GoReleaser's build folders: hostrelay_linux_amd64_v1, hostrelay_linux_arm64_v8.0.
COPY hostrelay_${TARGETOS}_${TARGETARCH}_*/hostrelay /hostrelay
# The state directory (the ACME certificate cache), writable by nonroot as in
# the root Dockerfile: distroless has no shell to mkdir, so an empty folder
# of the base image is copied there with its owner set.
COPY --from=gcr.io/distroless/static-debian12:nonroot --chown=nonroot:nonroot /home/nonroot /var/lib/hostrelay
USER nonroot:nonroot
WORKDIR /var/lib/hostrelay
EXPOSE 8080/tcp 3478/udp 3478/tcp 5349/tcp
ENTRYPOINT ["/hostrelay"]
