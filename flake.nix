{
  description = "numa-lb-repro: reproducing five load-balancing papers (dev shell and apps)";

  # nixpkgs is pinned by flake.lock; create or refresh it with `nix flake lock` (see README).
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.05";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
      tools = pkgs: [
        pkgs.python311
        pkgs.gnumake
        pkgs.git
        (pkgs.texlive.combine {
          inherit (pkgs.texlive) scheme-medium latexmk booktabs xcolor hyperref siunitx;
        })
      ];
      app = pkgs: verb: {
        type = "app";
        program = toString (pkgs.writeShellScript "numa-lb-repro-${verb}" ''
          export PATH=${pkgs.lib.makeBinPath (tools pkgs)}:$PATH
          exec make ${verb} "$@"
        '');
      };
    in
    {
      # The Python packages come from requirements.lock through the Makefile's virtualenv, so
      # the Nix shell and a plain Debian machine run the very same pinned versions.
      devShells = forAll (pkgs: {
        default = pkgs.mkShell {
          packages = tools pkgs;
          shellHook = ''
            echo "numa-lb-repro dev shell: 'make test' or 'make reproduce SCALE=smoke|quick|full'"
          '';
        };
      });
      apps = forAll (pkgs: {
        reproduce = app pkgs "reproduce";
        test = app pkgs "test";
        default = app pkgs "reproduce";
      });
    };
}
