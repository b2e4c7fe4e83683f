// ErrorMapper: turns an exception thrown by Iceberg's catalog code into the REST error response
// {"error": {"message": .., "type": .., "code": ..}} with the HTTP status the Iceberg REST spec
// (and Iceberg's own RESTCatalogAdapter) uses for it.
package org.apache.iceberg.rest;

import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchIcebergTableException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.apache.iceberg.exceptions.UnprocessableEntityException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonProcessingException;

final class ErrorMapper {
  private static final Map<Class<? extends Throwable>, Integer> CODES = new LinkedHashMap<>();

  static {
    // Checked in order: subclasses before their parents.
    CODES.put(NoSuchIcebergTableException.class, 404);
    CODES.put(NoSuchNamespaceException.class, 404);
    CODES.put(NoSuchTableException.class, 404);
    CODES.put(NoSuchViewException.class, 404);
    CODES.put(NotFoundException.class, 404);
    CODES.put(NamespaceNotEmptyException.class, 409);
    CODES.put(AlreadyExistsException.class, 409);
    CODES.put(CommitFailedException.class, 409);
    CODES.put(NotAuthorizedException.class, 401);
    CODES.put(ForbiddenException.class, 403);
    CODES.put(UnprocessableEntityException.class, 422);
    CODES.put(UnsupportedOperationException.class, 406);
    CODES.put(ValidationException.class, 400);
    CODES.put(BadRequestException.class, 400);
    CODES.put(IllegalArgumentException.class, 400);
    CODES.put(JsonProcessingException.class, 400);
    CODES.put(ServiceUnavailableException.class, 503);
    CODES.put(CommitStateUnknownException.class, 500);
  }

  private ErrorMapper() {}

  static ErrorResponse toResponse(Throwable error) {
    Throwable e = error;
    // JSON parse failures arrive wrapped in UncheckedIOException.
    if (e instanceof UncheckedIOException && e.getCause() instanceof JsonProcessingException) {
      e = e.getCause();
    }
    int code = 500;
    for (Map.Entry<Class<? extends Throwable>, Integer> entry : CODES.entrySet()) {
      if (entry.getKey().isInstance(e)) {
        code = entry.getValue();
        break;
      }
    }
    String type = e instanceof JsonProcessingException ? "BadRequestException" : e.getClass().getSimpleName();
    String message = e.getMessage() != null ? e.getMessage() : e.getClass().getName();
    return ErrorResponse.builder().responseCode(code).withType(type).withMessage(message).build();
  }

  static ErrorResponse noRoute(String method, String path) {
    return ErrorResponse.builder()
        .responseCode(400)
        .withType("BadRequestException")
        .withMessage(String.format("No route for request: %s %s", method, path))
        .build();
  }
}
