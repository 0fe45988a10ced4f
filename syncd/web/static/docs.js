// Swagger UI on /api/v1/docs, from a file rather than inline: the page's
// Content-Security-Policy allows no inline script.  Swagger UI itself is
// served from the installed package (swagger-ui-bundle-v2), never a CDN.
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({ url: root.dataset.spec, dom_id: "#swagger-ui" });
});
