# kubeload: loadgen (the CLI and the worker in pods), kubeload-operator and
# the kubectl plugin kubectl-kubeload (for CI jobs and hooks) in one image,
# built from source in a Debian bookworm stage and shipped on a slim runtime
# stage with only the shared libraries they link.
#
#   docker build -t kubeload:dev .
#   buildah bud --isolation chroot -t kubeload:dev .      (no Docker engine)
#   scripts/image-archive   the release: an OCI archive with the org.opencontainers.image.*
#                           labels, to push with skopeo (docs/deploy.md)
#
# The build stage's compiler cache is a cache mount (RUN --mount=type=cache):
# BuildKit (Docker's builder since 23.0), buildah and podman have it.
#
# BASE may name any Debian bookworm image; the test suite passes a locally
# made one (localhost/kubeload/debian:bookworm) so that no registry is needed.
ARG BASE=debian:bookworm-slim

FROM ${BASE} AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      g++ cmake ninja-build pkg-config libboost-dev libboost-system-dev libssl-dev \
      libcpprest-dev libyaml-cpp-dev prometheus-cpp-dev zlib1g-dev nlohmann-json3-dev \
      libnghttp2-dev liburing-dev libpcre2-dev libhowardhinnant-date-dev libsimdjson-dev \
      ccache >/dev/null \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY common common
COPY reports reports
COPY loadgen loadgen
COPY operator operator
COPY plugin plugin
# A compiler cache that outlives the build (a BuildKit or buildah cache mount,
# at most 1 GB): building again after a small change compiles what changed,
# not the whole project (minutes on a small machine).
ENV CCACHE_DIR=/root/.cache/ccache CCACHE_MAXSIZE=1G
RUN --mount=type=cache,target=/root/.cache/ccache \
    cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBELOAD_TESTS=OFF \
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null \
 && cmake --build /build -j"$(nproc)" \
 && strip /build/bin/loadgen /build/bin/kubeload-operator /build/bin/kubectl-kubeload

FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libcpprest2.10 libyaml-cpp0.7 libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 \
      libssl3 zlib1g libnghttp2-14 liburing2 libsimdjson14 ca-certificates \
      libdate-tz3 tzdata >/dev/null \
 && rm -rf /var/lib/apt/lists/*
# kubeload-operator runs workers as /usr/local/bin/loadgen in any image it
# allows (kWorkerCommand, operator/job_builder.hpp): keep the path.
COPY --from=build /build/bin/loadgen /build/bin/kubeload-operator /build/bin/kubectl-kubeload \
     /usr/local/bin/
COPY LICENSE /usr/share/doc/kubeload/LICENSE
# The worker listens on 8080; nothing here needs root.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/loadgen"]
